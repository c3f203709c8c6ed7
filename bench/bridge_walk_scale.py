"""The bridge walk's push tolerance on a stored collection: time per walk and agreement with
the exact walk, question by question.

    python bench/bridge_walk_scale.py ../shared/datasets/2wiki-dev \
        --data-dir .neorag/bench-scale --collection bench-scale-200000 \
        --out bench/out/bridge-walk-200k.json

For each question the restart vectors are built as the `bridge` mode builds them (the
question's dense hits and its own names), then the walk runs at tolerance 0 (the exact
power iteration) and at each tolerance given; each variant reports its p50 / p95 time
per walk, the share of the exact walk's top 100 and top 10 chunks it keeps, and the
largest score difference. Variants run alternately on the same question, so the machine's
load falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from json_out import emit  # noqa: E402


def measure(
    directory: Path, data_dir: Path, collection: str, tolerances: list[float], limit: int
) -> dict:
    from app.engine import Engine
    from app.eval.metrics import summarize
    from app.retrieval.base import Query, Trace
    from app.retrieval.bridge import BridgeRetriever
    from app.settings import Settings

    questions = [json.loads(line) for line in (directory / "questions.jsonl").open()][:limit]
    engine = Engine(Settings(data_dir=data_dir, collection=collection))
    try:
        engine.require_index()
        retriever = engine.retriever("bridge")
        assert isinstance(retriever, BridgeRetriever)
        graph, walk = retriever.walk()
        base = retriever.bcfg
        variants = [0.0, *tolerances]
        times: dict[float, list[float]] = {t: [] for t in variants}
        kept100: dict[float, list[float]] = {t: [] for t in variants}
        kept10: dict[float, list[float]] = {t: [] for t in variants}
        error: dict[float, float] = dict.fromkeys(variants, 0.0)
        for q in questions:
            text = q["question"]
            query = Query(text=text, tokens=engine.analyzer.tokens(text), engine=engine)
            chunk_restart, name_restart, _ = retriever.restarts(query, Trace("bridge", text))
            exact: np.ndarray | None = None
            for tol in variants:
                cfg = base.model_copy(update={"tolerance": tol})
                t0 = time.perf_counter()
                scores = walk.run(chunk_restart, name_restart, cfg)
                times[tol].append((time.perf_counter() - t0) * 1000)
                if exact is None:
                    exact = scores
                    top = np.argsort(-exact, kind="stable")[:100]
                mine = np.argsort(-scores, kind="stable")[:100]
                kept100[tol].append(len(set(top) & set(mine)) / 100)
                kept10[tol].append(len(set(top[:10]) & set(mine[:10])) / 10)
                error[tol] = max(error[tol], float(np.abs(scores - exact).max()))
    finally:
        engine.close()
    return {
        "dataset": directory.name,
        "collection": collection,
        "chunks": len(graph.chunk_ids),
        "names": len(graph.names),
        "relationships": int(walk.matrix.nnz),
        "questions": len(questions),
        "load_average": round(os.getloadavg()[0], 2),
        "variants": [
            {
                "tolerance": tol,
                "ms": summarize(times[tol]),
                "top100_kept": round(float(np.mean(kept100[tol])), 4),
                "top10_kept": round(float(np.mean(kept10[tol])), 4),
                "max_abs_error": error[tol],
            }
            for tol in variants
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--tolerances", default="1e-8,3e-8,1e-7,3e-7")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tolerances = [float(t) for t in args.tolerances.split(",")]
    emit(
        measure(args.dataset, args.data_dir, args.collection, tolerances, args.limit),
        args.out,
    )


if __name__ == "__main__":
    main()
