"""One-document-change benchmark: what re-ingesting costs after editing, adding or removing a
single passage of an already indexed corpus, by stage (embedded backend by default).

    python -m bench change ../shared/datasets/2wiki-dev --work .neorag/bench \
        --out bench/out/change-2wiki.json

`--work` keeps a fully indexed copy of the corpus between runs (`<work>/base` indexing
`<work>/corpus`, built on first use: a fresh ingest, minutes). Every run copies the store,
warms the models up on a throwaway store, re-ingests the unchanged corpus once (a no-op, or
the derived-stage rebuild a new edge-builder version asks for: reported as `warm`), then
applies `--rounds` changes one after another to `<work>/corpus` (edit, add, remove, edit,
...; the original file is put back afterwards) and times each re-ingest in-process with the
models loaded. With `--from-command` each change is instead re-ingested by `neorag ingest`
in a new process, as a user runs it, and timed end to end from the command (its process
start and model loads included); its own report gives the stages. Figures are wall-clock
seconds on a shared machine: indicative only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

KINDS = ("edit", "add", "remove")


def _ingest(corpus_dir: Path, data_dir: Path, backend: str, models: object) -> dict[str, object]:
    from app.services import index_dir, open_store
    from app.settings import Settings
    from ingest.runner import run_ingest

    settings = Settings(backend=backend, data_dir=data_dir)
    with open_store(settings) as store:
        t0 = time.perf_counter()
        report = run_ingest(
            corpus_dir,
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            models=models,
        )
        total = time.perf_counter() - t0
        chunks = store.status().chunks
    return {
        "seconds": round(total, 3),
        "stages": report.seconds,
        "new": len(report.new),
        "changed": len(report.changed),
        "removed": len(report.removed),
        "chunks": chunks,
        "warnings": report.warnings,
    }


def _ingest_command(corpus_dir: Path, data_dir: Path, backend: str) -> dict[str, object]:
    """One `neorag ingest` run in its own process, timed from the outside."""
    env = {**os.environ, "NEORAG_DATA_DIR": str(data_dir), "NEORAG_BACKEND": backend}
    env.pop("NEORAG_COLLECTION", None)
    neorag = str(Path(sys.executable).with_name("neorag"))
    t0 = time.perf_counter()
    done = subprocess.run(
        [neorag, "ingest", str(corpus_dir), "--json"], env=env, capture_output=True, text=True
    )
    total = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"neorag ingest failed: {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    return {
        "seconds": round(total, 3),
        "stages": report["seconds"],
        "new": len(report["new"]),
        "changed": len(report["changed"]),
        "removed": len(report["removed"]),
        "chunks": report["chunks"],
        "warnings": report["warnings"],
    }


def _change(passages: list[dict[str, str]], kind: str, round_no: int) -> str:
    """Apply one change to the passage list in place; returns a description."""
    if kind == "edit":
        p = passages[(round_no * 997) % len(passages)]
        p["text"] += f" An added sentence, revision {round_no}."
        return f"edit {p['id']}"
    if kind == "add":
        donor = passages[(round_no * 389) % len(passages)]
        new = {
            "id": f"bench-added-{round_no}",
            "title": f"{donor['title']} (bench copy {round_no})",
            "text": f"{donor['text']} This copy was added by the benchmark.",
        }
        passages.append(new)
        return f"add {new['id']}"
    gone = passages.pop((round_no * 613) % len(passages))
    return f"remove {gone['id']}"


def main() -> None:
    from bench.json_out import emit

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--work", type=Path, default=REPO / ".neorag" / "bench")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--from-command", action="store_true", help="time `neorag ingest` runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from app.settings import Settings
    from ingest.models import IngestModels

    models = IngestModels(Settings().ingest.models)
    work = args.work.resolve()
    corpus_dir = work / "corpus"
    base = work / "base"
    source = args.dataset / "corpus.jsonl"
    result: dict[str, object] = {
        "dataset": args.dataset.name,
        "backend": args.backend,
        "machine": f"{os.cpu_count()} cores",
        "command": " ".join(["python", "-m", "bench", "change", *sys.argv[1:]]),
        "timed": "neorag ingest, end to end" if args.from_command else "in-process, models loaded",
    }
    if not (base / args.backend).exists():
        corpus_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, corpus_dir / "corpus.jsonl")
        print(f"[bench] fresh ingest of {source} into {base} ...", file=sys.stderr)
        result["fresh"] = _ingest(corpus_dir, base, args.backend, models)
    run_dir = work / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(base, run_dir)
    warm_corpus = work / "warm-corpus"
    warm_corpus.mkdir(exist_ok=True)
    (warm_corpus / "corpus.jsonl").write_text(
        json.dumps({"id": "w", "title": "Warm", "text": "Paris is in France. It is big."}) + "\n"
    )
    _ingest(warm_corpus, work / "warm-store", args.backend, models)
    corpus_file = corpus_dir / "corpus.jsonl"
    original = corpus_file.read_text(encoding="utf-8")
    passages = [json.loads(line) for line in original.splitlines() if line.strip()]
    print("[bench] warm re-ingest of the unchanged corpus ...", file=sys.stderr)
    result["warm"] = _ingest(corpus_dir, run_dir, args.backend, models)
    rounds = []
    try:
        for i in range(args.rounds):
            what = _change(passages, KINDS[i % len(KINDS)], i)
            corpus_file.write_text(
                "".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8"
            )
            if args.from_command:
                again = _ingest_command(corpus_dir, run_dir, args.backend)
            else:
                again = _ingest(corpus_dir, run_dir, args.backend, models)
            one = {"change": what, **again}
            print(f"[bench] {what}: {one['seconds']} s {one['stages']}", file=sys.stderr)
            rounds.append(one)
    finally:
        corpus_file.write_text(original, encoding="utf-8")
    result["rounds"] = rounds
    stages = sorted({s for r in rounds for s in r["stages"]})
    result["median_seconds"] = round(statistics.median(r["seconds"] for r in rounds), 3)
    result["median_stage_seconds"] = {
        s: round(statistics.median(r["stages"].get(s, 0.0) for r in rounds), 3) for s in stages
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
