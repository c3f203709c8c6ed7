"""Where a mode's query time goes, step by step, from its own traces.

    python bench/latency_steps.py ../shared/datasets/2wiki-dev --mode default \
        --out bench/out/latency-steps-2wiki-dev.json
    python bench/latency_steps.py ../shared/datasets/2wiki-dev --mode tigrag \
        --data-dir .neorag/bench-scale --collection bench-scale-200000

Runs the dataset's questions (its evaluation index, built by `neorag eval` if missing) and
reads each retrieval's trace: for every step name, the per-question total (a step that runs
once per hop is summed) and its p50 / p95 / mean over the questions, beside the end-to-end
latency and the process's CPU time per question measured in the same run. The commit, the
load average and a digest of every question's top-10 documents are recorded, so runs of two
commits in one sitting compare like with like (same digest: same rankings). Steps can
overlap in time (TIGRAG encodes beside its PageRank; the default's parts run side by side
on two cores), so their sum is not the total.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from json_out import current_commit, emit  # noqa: E402


def measure(
    directory: Path,
    mode: str,
    limit: int | None,
    data_dir: Path | None,
    collection: str | None = None,
) -> dict:
    from app.engine import Engine
    from app.eval.harness import Dataset, ensure_index, eval_settings
    from app.eval.metrics import summarize
    from app.settings import Settings
    from ingest.report import NoProgress

    dataset = Dataset.load(directory, limit=limit)
    base = Settings() if data_dir is None else Settings(data_dir=data_dir)
    if collection is None:
        settings = eval_settings(base, dataset)
        ensure_index(settings, dataset, NoProgress())
    else:
        settings = base.model_copy(update={"collection": collection})
    engine = Engine(settings)
    try:
        engine.require_index()
        retriever = engine.retriever(mode)
        retriever.retrieve(dataset.questions[0]["question"])  # warm-up: loads models
        engine.settle()  # and, on a server, the in-process copies it started
        totals: list[float] = []
        cpu: list[float] = []
        tops: list[list[str]] = []
        steps: dict[str, list[float]] = defaultdict(list)
        load = os.getloadavg()[0]
        for q in dataset.questions:
            t0, c0 = time.perf_counter(), time.process_time()
            result = retriever.retrieve(q["question"])
            totals.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            tops.append(result.doc_ranking()[:10])
            per_step: dict[str, float] = defaultdict(float)
            for step in result.trace.steps:
                per_step[step.name] += step.ms
            for name, ms in per_step.items():
                steps[name].append(ms)
    finally:
        engine.close()
    commit = current_commit()
    return {
        "dataset": dataset.name,
        "collection": settings.collection,
        "mode": mode,
        "commit": commit,
        "questions": len(totals),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
        "rankings_digest": hashlib.sha256(json.dumps(tops).encode()).hexdigest()[:16],
        "total_ms": summarize(totals),
        "cpu_ms": summarize(cpu),
        "steps": {
            name: {
                **summarize(values),
                "mean": round(statistics.fmean(values), 2),
                "questions": len(values),
                "mean_share_of_total": round(sum(values) / sum(totals), 3),
            }
            for name, values in sorted(steps.items(), key=lambda kv: -sum(kv[1]))
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--mode", default="default")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument(
        "--collection",
        default=None,
        help="an existing collection under --data-dir to ask instead of the dataset's own "
        "evaluation index (a scale benchmark's store: its rankings use that corpus's ids)",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    emit(
        measure(args.dataset, args.mode, args.limit, args.data_dir, args.collection),
        args.out,
    )


if __name__ == "__main__":
    main()
