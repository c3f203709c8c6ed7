"""The offline reader's answers as one span weight varies, over a dataset's evaluation index.

    python -m bench reader bench/datasets/sqlite-docs bench/datasets/git-docs \
        --feature mirror --weights 0,3,6,10 --out bench/out/reader-mirror-weights.json

Each question is retrieved once (default mode, as `neorag eval --answer offline` does);
then, per weight, the reader reads the same evidence with that weight for `--feature` and
the others as shipped. Reports answer_hit and EM per weight, and which questions each
weight answers, so the README's choice of a weight can be checked.

`--support`: when the reader's short answer is shown, precision and coverage by threshold.

    python -m bench reader sample_corpus/wiki hotpotqa-200 bench/datasets/sqlite-docs \
        bench/datasets/git-docs --support --out bench/out/abstain.json

Each dataset's evaluation index must exist (`neorag eval DATASET --modes default` builds
it). Each question is retrieved once (default mode) and read once; its reading's support
(app/reader/confidence.py) decides, per threshold, whether the short answer is shown.
The questions are split by a fixed rule, even and odd position in questions.jsonl: the
threshold is chosen on the even halves of all the sets together (`--rule utility`: most
right answers shown minus wrong ones; `--rule precision`: the lowest at which 80% of the
shown ones are right) and reported on the odd halves, with `answer_precision` (the share
of shown short answers that name the gold answer) and `answer_coverage` (the share of
questions shown one). The nonsense and out-of-corpus questions of
bench/datasets/nonsense-questions.jsonl are asked of every index too: `abstained` is the
share that gets no short answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def sweep(directory: Path, feature: str, weights: list[float]) -> dict:
    from app.answer import evidence_sentences
    from app.engine import Engine
    from app.eval.harness import Dataset, eval_settings
    from app.eval.metrics import answer_in, exact_match
    from app.reader import scoring, shared_reader
    from app.settings import Settings

    dataset = Dataset.load(directory)
    settings = eval_settings(Settings(), dataset)
    engine = Engine(settings)
    shipped = scoring.WEIGHTS[feature]
    try:
        engine.require_index()
        reader = shared_reader(settings.ingest.models.spacy_model)
        retriever = engine.retriever("default")
        cases = [
            (q, evidence_sentences(engine, retriever.retrieve(q["question"])))
            for q in dataset.questions
        ]
        rows = []
        for weight in weights:
            scoring.WEIGHTS[feature] = weight
            hits, exact = [], 0.0
            for q, evidence in cases:
                short = reader.read(q["question"], evidence).short
                exact += exact_match(short, q["answers"])
                if answer_in(short, q["answers"]):
                    hits.append(q.get("id"))
            n = len(cases)
            rows.append(
                {
                    "weight": weight,
                    "answer_hit": round(100 * len(hits) / n, 1),
                    "em": round(100 * exact / n, 1),
                    "answered": hits,
                }
            )
    finally:
        scoring.WEIGHTS[feature] = shipped
        engine.close()
    return {"dataset": dataset.name, "questions": len(cases), "shipped": shipped, "rows": rows}


NONSENSE = REPO / "bench" / "datasets" / "nonsense-questions.jsonl"
THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 17)]


@dataclass(frozen=True, slots=True)
class Read:
    index: int
    right: bool  # the reader's pick names a gold answer
    short: bool  # the reader has a pick at all
    confidence: float


def read_set(directory: Path, nonsense: list[str]) -> tuple[str, list[Read], list[float | None]]:
    """Every question of the dataset read once, and the nonsense questions' confidences
    (None: the reader named nothing)."""
    from app.answer import evidence_sentences
    from app.engine import Engine
    from app.eval.harness import Dataset, eval_settings
    from app.eval.metrics import answer_in
    from app.reader import shared_reader
    from app.settings import Settings

    dataset = Dataset.load(directory)
    engine = Engine(eval_settings(Settings(), dataset))
    try:
        engine.require_index()
        reader = shared_reader(engine.settings.ingest.models.spacy_model)
        retriever = engine.retriever("default")

        def reading(question: str) -> tuple[str, float]:
            result = retriever.retrieve(question)
            evidence = evidence_sentences(engine, result) if result.context else []
            if not evidence:
                return "", 0.0
            got = reader.read(result.question, evidence)
            return got.short, got.support.confidence

        reads = []
        for i, q in enumerate(dataset.questions):
            short, confidence = reading(q["question"])
            right = bool(short) and bool(answer_in(short, q["answers"]))
            reads.append(Read(i, right, bool(short), confidence))
        odd = [c if s else None for s, c in map(reading, nonsense)]
    finally:
        engine.close()
    return dataset.name, reads, odd


def figures(reads: list[Read], threshold: float) -> dict[str, float | int]:
    shown = [r for r in reads if r.short and r.confidence >= threshold]
    right = sum(r.right for r in shown)
    return {
        "questions": len(reads),
        "shown": len(shown),
        "right": right,
        "answer_precision": round(100 * right / len(shown), 1) if shown else 0.0,
        "answer_coverage": round(100 * len(shown) / len(reads), 1) if reads else 0.0,
        "utility": right - (len(shown) - right),
    }


def abstained(confidences: list[float | None], threshold: float) -> float:
    kept = sum(1 for c in confidences if c is None or c < threshold)
    return round(100 * kept / len(confidences), 1) if confidences else 0.0


PRECISION = 80.0  # the share of shown short answers the answer-quality issue asks for


def choose(fit: list[Read], rule: str = "utility") -> float:
    """`utility`: the threshold with the most right minus wrong shown answers on `fit`
    (a wrong confident answer costs what a right one gains), the lowest of a tie.
    `precision`: the lowest at which PRECISION percent of the shown answers of `fit` are
    right, so coverage is as high as that allows (`utility` when none reaches it)."""
    if rule == "precision":
        for t in THRESHOLDS:
            at = figures(fit, t)
            if at["shown"] and at["answer_precision"] >= PRECISION:
                return t
    return max(THRESHOLDS, key=lambda t: (figures(fit, t)["utility"], -t))


def support(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", help="dataset folders or shared set names")
    parser.add_argument("--nonsense", type=Path, default=NONSENSE)
    parser.add_argument("--rule", choices=("utility", "precision"), default="utility")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from app.settings import Settings
    from bench.json_out import current_commit, emit
    from bench.suites.recall import locate

    nonsense = [json.loads(line)["question"] for line in args.nonsense.read_text().splitlines()]
    sets = [read_set(locate(d), nonsense) for d in args.datasets]
    fit = [r for _, reads, _ in sets for r in reads if r.index % 2 == 0]
    chosen = choose(fit, args.rule)
    shipped = Settings().answer_min_confidence
    out_sets = []
    for name, reads, odd in sets:
        halves = {
            "even": [r for r in reads if r.index % 2 == 0],
            "odd": [r for r in reads if r.index % 2 == 1],
        }
        out_sets.append(
            {
                "dataset": name,
                "at_chosen": {h: figures(rs, chosen) for h, rs in halves.items()},
                "at_shipped": {h: figures(rs, shipped) for h, rs in halves.items()},
                "always_shown": {h: figures(rs, 0.0) for h, rs in halves.items()},
                "nonsense_abstained": {
                    "chosen": abstained(odd, chosen),
                    "shipped": abstained(odd, shipped),
                    "always_shown": abstained(odd, 0.0),
                },
                "by_threshold_even": {str(t): figures(halves["even"], t) for t in THRESHOLDS},
            }
        )
    emit(
        {
            "command": "python -m bench reader --support " + " ".join(argv),
            "commit": current_commit(),
            "rule": f"{args.rule}: fitted on the even-indexed questions of all sets "
            "together, reported on the odd ones",
            "chosen_threshold": chosen,
            "shipped_threshold": shipped,
            "nonsense_file": str(args.nonsense.relative_to(REPO))
            if args.nonsense.is_relative_to(REPO)
            else str(args.nonsense),
            "pooled": {
                "even": figures(fit, chosen),
                "odd": figures([r for _, rs, _ in sets for r in rs if r.index % 2 == 1], chosen),
            },
            "sets": out_sets,
        },
        args.out,
    )


def main() -> None:
    if "--support" in sys.argv[1:]:
        support([a for a in sys.argv[1:] if a != "--support"])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--feature", default="mirror")
    parser.add_argument("--weights", default="0,3,6,10")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from bench.json_out import current_commit, emit

    weights = [float(w) for w in args.weights.split(",")]
    emit(
        {
            "command": "python " + " ".join(sys.argv),
            "commit": current_commit(),
            "feature": args.feature,
            "sets": [sweep(d, args.feature, weights) for d in args.datasets],
        },
        args.out,
    )


if __name__ == "__main__":
    main()
