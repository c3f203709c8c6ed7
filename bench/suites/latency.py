"""Where a mode's query time goes, step by step, from its own traces.

    python -m bench latency 2wiki-dev          # → bench/out/latency/steps-2wiki-dev.json
    python -m bench latency 2wiki-dev musique-200 --encoders float,hop-int8,onnx-int8
    python -m bench latency ../shared/datasets/2wiki-dev --mode tigrag \
        --data-dir .neorag/bench-scale --collection bench-scale-200000

Runs the dataset's questions (its evaluation index, built by `neorag eval` if missing) and
reads each retrieval's trace: for every step name, the per-question total (a step that runs
once per hop is summed) and its p50 / p95 / mean over the questions, beside the end-to-end
latency and the process's CPU time per question measured in the same run. The commit, the
load average and a digest of every question's top-10 documents are recorded, so runs of two
commits in one sitting compare like with like (same digest: same rankings). Steps can
overlap in time (TIGRAG encodes beside its PageRank; the default's parts run side by side
on two cores), so their sum is not the total.

`--warm-up` instead times what an engine does before its first answer, part by part: open
the store and load the search indexes, load the query model, then each part of the mode
warms what it derives (the bridge graph, the token graph, LiteRAG's tables), then the
first and second questions; on an existing collection with `--data-dir`/`--collection`
(→ bench/out/latency/warm-up-DATASET.json).

`--encoders` instead runs `neorag eval DATASET --modes default` once per query-encoder
setting (float: the shipped ONNX float encoder; hop-int8: TIGRAG's hop texts in int8;
onnx-int8: every query-time encode in int8), one after the other, each to
bench/out/latency/eval-DATASET-SETTING.json, so the settings compare within one sitting.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.json_out import current_commit, emit  # noqa: E402


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


ENCODERS = {
    "float": {},
    "hop-int8": {"NEORAG_RETRIEVAL__TIGRAG__HOP_ENCODER": "int8"},
    "onnx-int8": {"NEORAG_RETRIEVAL__QUERY_ENCODER": "onnx-int8"},
}


def encoders(datasets: list[str], settings: list[str]) -> int:
    """Default-mode recall and latency per query-encoder setting (the recall suite's runs)."""
    from bench.suites.recall import OUT, Run, run_all

    runs = [
        Run(
            ds,
            "embedded",
            "default",
            OUT / "latency" / f"eval-{Path(ds).name}-{s}.json",
            env=ENCODERS[s],
        )
        for ds in datasets
        for s in settings
    ]
    return run_all(runs, dry_run=False)


def _rss_mb() -> float:
    """This process's resident memory now (MB), from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def warm_up(mode: str, data_dir: Path | None, collection: str | None, questions: list[str]):
    """Seconds of each step of an engine's start, in one fresh process (this one), and the
    resident memory after each (a step's growth is what it holds, or touched, in memory)."""
    from app.engine import Engine
    from app.settings import load_settings

    overrides: dict = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if collection is not None:
        overrides["collection"] = collection
    settings = load_settings(**overrides)
    steps: dict[str, float] = {}
    rss: dict[str, float] = {"before": _rss_mb()}
    t0 = time.perf_counter()
    engine = Engine(settings)
    steps["open store and indexes"] = time.perf_counter() - t0
    rss["open store and indexes"] = _rss_mb()
    try:
        t = time.perf_counter()
        engine.query_model  # noqa: B018 - the load is what is timed
        steps["query model"] = time.perf_counter() - t
        rss["query model"] = _rss_mb()
        retriever = engine.retriever(mode)
        parts = getattr(retriever, "parts", lambda: ())()
        for name in parts or (mode,):
            part = retriever._part(name) if parts else retriever
            t = time.perf_counter()
            part.warm()
            steps[f"warm {name}"] = time.perf_counter() - t
            rss[f"warm {name}"] = _rss_mb()
        t = time.perf_counter()
        engine.settle()
        steps["settle"] = time.perf_counter() - t
        for n, question in enumerate(questions[:2], start=1):
            t = time.perf_counter()
            retriever.retrieve(question)
            steps[f"question {n}"] = time.perf_counter() - t
            rss[f"question {n}"] = _rss_mb()
        for question in questions[2:100]:
            retriever.retrieve(question)
        rss[f"after {min(len(questions), 100)} questions"] = _rss_mb()
        chunks = len(engine.dense)
    finally:
        engine.close()
    return {
        "mode": mode,
        "backend": settings.backend,
        "collection": settings.collection,
        "chunks": chunks,
        "seconds": {k: round(v, 3) for k, v in steps.items()},
        "warm_up_seconds": round(sum(v for k, v in steps.items() if "question" not in k), 3),
        "rss_mb": rss,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="+", help="a dataset folder (several with --encoders)")
    parser.add_argument("--encoders", help=f"comma-separated settings of {sorted(ENCODERS)}")
    parser.add_argument("--mode", default="default")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument(
        "--collection",
        default=None,
        help="an existing collection under --data-dir to ask instead of the dataset's own "
        "evaluation index (a scale benchmark's store: its rankings use that corpus's ids)",
    )
    parser.add_argument("--warm-up", action="store_true", help="time an engine's start instead")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.encoders:
        return encoders(args.dataset, args.encoders.split(","))
    from bench.suites.recall import OUT, locate

    dataset = locate(args.dataset[0])
    if args.warm_up:
        lines = (dataset / "questions.jsonl").read_text().splitlines()
        questions = [json.loads(line)["question"] for line in lines[:100]]
        out = args.out or OUT / "latency" / f"warm-up-{dataset.name}.json"
        emit(warm_up(args.mode, args.data_dir, args.collection, questions), out)
        return 0
    out = args.out or OUT / "latency" / f"steps-{dataset.name}.json"
    emit(measure(dataset, args.mode, args.limit, args.data_dir, args.collection), out)
    return 0


if __name__ == "__main__":
    main()
