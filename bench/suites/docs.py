"""Docs suite: the bundled documentation corpora (bench/datasets/sqlite-docs, git-docs,
postgres-docs). Each set is checked first (every answer string in a gold page as neorag's
loader reads it, meta.json's counts; bench/datasets/check_folder.py), then the recall suite
runs on it (every mode, page-level recall) and the answers suite.

A set written to be held out from tuning (postgres-docs) runs on its development half
only, into eval-SET-dev-BACKEND.json; `--held-out` runs the other half instead, into
eval-SET-held-out-BACKEND.json, once, when the settings are chosen.

    python -m bench docs                      # every set, both backends
    python -m bench docs git-docs --backends embedded
    python -m bench docs postgres-docs --held-out --backends embedded
    python -m bench docs --fusion-replay      # the default's fusion under each variant

`--fusion-replay` asks each set's questions once (embedded index; both halves of sqlite-docs
and git-docs, postgres-docs' development half only) and keeps what the default mode's
fusion reads: the ranking of each of its parts (tigrag, bridge, hybrid) and the pages'
sizes. It then replays the default mode's own
fusion code over them under each setting of REPLAY_VARIANTS, so a fusion rule is scored
on every docs set in seconds instead of one eval per setting. The shipped settings'
replay must equal the live ranking question by question, or the suite stops. Writes
bench/out/fusion-replay-embedded.json: each variant's R@1/2/5, MRR and ans@5 per set and
half beside dense, BM25 and hybrid, and where the default is below either.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.suites import answers
from bench.suites.recall import DOCS, MODES, OUT, REPO, Run, locate, run_all

if TYPE_CHECKING:
    from app.settings import Settings

HALVED = {"postgres-docs": {"dev": "even", "held-out": "odd"}}
"""Sets split by position in questions.jsonl: which half is developed on, which held out."""


PER_QUESTION = ["--per-question"]
"""Every docs run keeps its per-question rows: the results page scores each half from them."""


def eval_run(ds: str, backend: str, out: Path, held_out: bool) -> Run:
    """The recall run of one set on one backend (its half, for a halved set)."""
    if ds not in HALVED:
        return Run(ds, backend, MODES, out / f"eval-{ds}-{backend}.json", args=PER_QUESTION)
    half = "held-out" if held_out else "dev"
    return Run(
        ds,
        backend,
        MODES,
        out / f"eval-{ds}-{half}-{backend}.json",
        args=["--half", HALVED[ds][half], *PER_QUESTION],
    )


REPLAY_VARIANTS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "passage match off": {"retrieval.passage_match": "off"},
    "passage match always": {"retrieval.passage_match": "on"},
    "page share 0.8": {"retrieval.passage_match_page_share": 0.8},
    "page share 1 (no cap)": {"retrieval.passage_match_page_share": 1.0},
    "page evidence 0": {"retrieval.passage_match_page_evidence": 0.0},
    "page evidence 1": {"retrieval.passage_match_page_evidence": 1.0},
    "page evidence 2": {"retrieval.passage_match_page_evidence": 2.0},
    "tigrag x0.25": {"retrieval.passage_match_weights": {"tigrag": 0.25}},
    "tigrag x1": {"retrieval.passage_match_weights": {"tigrag": 1.0}},
    "hybrid x2": {"retrieval.passage_match_weights": {"tigrag": 0.5, "hybrid": 2.0}},
    "fused order within pages": {"retrieval.passage_match_within_page": False},
}
"""Setting overrides the fusion replay scores, each against the shipped settings."""

REPLAY_PARTS = ("tigrag", "bridge", "hybrid")
BASELINES = ("dense", "bm25", "hybrid")


def replay_capture(name: str, half: str | None, settings: Settings) -> list[dict[str, Any]]:
    """Each question of a set's half asked once on its evaluation index (`capture`)."""
    from app.engine import Engine
    from app.eval.harness import Dataset, eval_settings, gold_document_ids

    dataset = Dataset.load(locate(name), half=half)
    bound = eval_settings(settings, dataset)
    engine = Engine(bound)
    try:
        engine.require_index()
        return [
            {
                "id": q.get("id"),
                **capture(engine, q["question"], q["answers"]),
                "gold": gold_document_ids(bound, dataset, q["gold"]),
            }
            for q in dataset.questions
        ]
    finally:
        engine.close()


def capture(engine: Any, question: str, answers: list[str]) -> dict[str, Any]:
    """What the default mode's fusion reads for one question, and what scores it: the
    default's live ranking, its parts' and the baselines' rankings, the sizes of the pages
    they rank, and which of all these chunks hold an answer string."""
    from app.eval.metrics import answer_in_texts
    from app.retrieval.links import doc_id_of

    sizes = engine.document_sizes()
    ranked = {
        mode: [s.chunk_id for s in engine.retriever(mode).retrieve(question).ranking]
        for mode in ("default", *REPLAY_PARTS, "dense", "bm25")
    }
    every = sorted({c for r in ranked.values() for c in r})
    chunks = engine.store.get_chunks(every)
    return {
        "rankings": ranked,
        "answer": {c.id for c in chunks if answers and answer_in_texts([c.text], answers)},
        "sizes": {doc_id_of(c): sizes.get(doc_id_of(c), 1) for c in every},
    }


def replay(row: dict[str, Any], settings: Settings) -> list[str]:
    """The default mode's fusion (app/retrieval/composed.py, its own code) over the stored
    part rankings, under `settings`."""
    from app.retrieval.base import Retriever, ScoredChunk, Trace
    from app.retrieval.composed import DefaultRetriever

    class Stored:
        def __init__(self) -> None:
            self.settings = settings

        def document_sizes(self) -> Counter[str]:
            return Counter(row["sizes"])

    class StoredPart(Retriever):
        def __init__(self, name: str) -> None:
            self.name, self.cfg = name, settings.retrieval

        def _retrieve(self, query: Any, trace: Trace, k: int) -> list[ScoredChunk]:
            return [ScoredChunk(c, 0.0) for c in row["rankings"][self.name]]

    class Replayed(DefaultRetriever):
        def _part(self, name: str) -> Retriever:
            return StoredPart(name)

        def _rankings(self, query: Any, trace: Trace, k: int, parts: tuple[str, ...]):
            return {p: [(c, 0.0) for c in row["rankings"][p]] for p in parts}

    retriever = Replayed(Stored())  # type: ignore[arg-type]
    k = settings.retrieval.top_k
    return [s.chunk_id for s in retriever._retrieve(None, Trace("default", ""), k)]  # type: ignore[arg-type]


def replay_scores(rows: list[dict[str, Any]], ranked: list[list[str]]) -> dict[str, float]:
    from app.eval.metrics import mrr, recall_at_k
    from app.retrieval.links import doc_id_of

    out: dict[str, list[float]] = {"recall@1": [], "recall@2": [], "recall@5": [], "mrr": []}
    answer: list[float] = []
    for row, chunks in zip(rows, ranked, strict=True):
        pages = [doc_id_of(c) for c in chunks]
        for k in (1, 2, 5):
            out[f"recall@{k}"].append(100 * recall_at_k(pages, row["gold"], k))
        out["mrr"].append(mrr(pages, row["gold"]))
        answer.append(100.0 * any(c in row["answer"] for c in chunks[:5]))
    scores = {m: round(sum(v) / len(v), 3 if m == "mrr" else 1) for m, v in out.items()}
    return {**scores, "answer@5": round(sum(answer) / len(answer), 1)}


def fusion_replay(names: list[str], out: Path) -> int:
    from app.overrides import with_overrides
    from app.settings import Settings
    from bench.json_out import emit

    data_dir = Path(os.environ.get("NEORAG_DATA_DIR", REPO / ".neorag" / "eval-cache"))
    base = Settings(backend="embedded", data_dir=data_dir)
    variants = {v: with_overrides(base, o) for v, o in REPLAY_VARIANTS.items()}
    sets: dict[str, Any] = {}
    for name in names:
        if name in HALVED:
            halves = {"development": HALVED[name]["dev"]}  # its held-out half stays unseen
        else:
            halves = {"even": "even", "odd": "odd"}
        sets[name] = {}
        for label, half in halves.items():
            rows = replay_capture(name, half, base)
            shipped = [replay(r, base) for r in rows]
            live = [r["rankings"]["default"] for r in rows]
            if shipped != live:
                differ = [r["id"] for r, a, b in zip(rows, shipped, live, strict=True) if a != b]
                print(
                    f"{name}: the replay differs from the live ranking on {differ}", file=sys.stderr
                )
                return 1
            baselines = {
                b: replay_scores(rows, [r["rankings"][b] for r in rows]) for b in BASELINES
            }
            cell: dict[str, Any] = {"questions": len(rows), "baselines": baselines, "variants": {}}
            for variant, settings in variants.items():
                scores = replay_scores(rows, [replay(r, settings) for r in rows])
                below = [
                    f"{metric} < {b}"
                    for metric, value in scores.items()
                    for b in ("dense", "hybrid")
                    if value < baselines[b][metric]
                ]
                cell["variants"][variant] = {"scores": scores, "below": below}
            sets[name][label] = cell
            print(f"{name} · {label}: {len(rows)} questions replayed", file=sys.stderr)
    emit(
        {
            "command": "python -m bench docs --fusion-replay " + " ".join(names),
            "backend": "embedded",
            "variants": REPLAY_VARIANTS,
            "sets": sets,
        },
        out / "fusion-replay-embedded.json",
    )
    return 0


def check(names: list[str]) -> list[str]:
    """Every problem the dataset checker finds, prefixed by its set."""
    sys.path.insert(0, str(REPO / "bench" / "datasets"))
    from check_folder import check as check_folder

    return [f"{name}: {problem}" for name in names for problem in check_folder(locate(name))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("datasets", nargs="*", default=[*DOCS, *HALVED])
    p.add_argument(
        "--held-out", action="store_true", help="a halved set's held-out half (run it once)"
    )
    p.add_argument("--backends", default="embedded,neo4j")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the JSON (bench/out)")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    p.add_argument(
        "--fusion-replay",
        action="store_true",
        help="score the default's fusion under each of REPLAY_VARIANTS (embedded indexes)",
    )
    args = p.parse_args()
    if problems := check(args.datasets):
        print("\n".join(problems), file=sys.stderr)
        return 1
    if args.fusion_replay:
        return fusion_replay(args.datasets, args.out)
    runs = [
        eval_run(ds, backend, args.out, args.held_out)
        for backend in args.backends.split(",")
        for ds in args.datasets
    ]
    runs += answers.plan([d for d in args.datasets if d not in HALVED], False, out=args.out)
    return run_all(runs, args.dry_run)
