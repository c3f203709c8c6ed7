"""What the token PageRank's tolerance costs and changes, on a stored collection: for each
tolerance, the top-γ tokens' overlap with the run at the exact tolerance (1e-7), the nodes
that send summed over supersteps (the work a sparse superstep does), and the time per run.

    python bench/ppr_tolerance.py DATA_DIR COLLECTION --out bench/out/ppr-tolerance-2wiki-dev.json

Seeds are the 2wiki-dev questions' tokens found in the graph (TIGRAG's first round); the
graph is the one queries use (CO_OCCURS of at least `token_min_weight`). This measures the
PageRank alone; `neorag eval` with `NEORAG_ALGORITHMS__PPR_TOLERANCE` measures recall.
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

QUESTIONS = REPO.parent / "shared" / "datasets" / "2wiki-dev" / "questions.jsonl"
TOLERANCES = (1e-7, 1e-6, 1e-5, 1e-4)
GAMMA = 30


def senders(op: object, seeds: dict[int, float], damping: float, tol: float, steps: int) -> int:
    """Nodes that send, summed over the supersteps of one run (GDS semantics)."""
    scores = op.initial_scores(seeds, damping, seed_weights=False)  # type: ignore[attr-defined]
    out, total = scores.copy(), 0
    for _ in range(1, steps):
        total += int(np.count_nonzero(out))
        delta = op.push @ out * damping  # type: ignore[attr-defined]
        active = delta > tol
        if not active.any():
            break
        out = np.where(active, delta, 0.0)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("collection")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from app.engine import Engine
    from app.settings import Settings

    settings = Settings(
        backend=os.environ.get("NEORAG_BACKEND", "embedded"),
        data_dir=args.data_dir,
        collection=args.collection,
    )
    engine = Engine(settings)
    engine.require_index()
    cfg = settings.algorithms
    graph = engine.store._memory.token_graph(cfg.token_min_weight)  # type: ignore[attr-defined]
    op = graph.operator
    questions = [json.loads(line)["question"] for line in QUESTIONS.open()][: args.questions]
    seeds = []
    for q in questions:
        found = [t for t in dict.fromkeys(engine.analyzer.tokens(q)) if t in graph.index]
        if found:
            seeds.append({graph.index[t]: 1.0 for t in found})
    exact_cfg = cfg.model_copy(update={"ppr_tolerance": TOLERANCES[0]})
    exact = [op.run(s, exact_cfg) for s in seeds]
    rows = []
    for tol in TOLERANCES:
        run_cfg = cfg.model_copy(update={"ppr_tolerance": tol})
        overlap, work, ms = [], [], []
        for s, ref in zip(seeds, exact, strict=True):
            t0 = time.perf_counter()
            got = op.run(s, run_cfg)
            ms.append(1000 * (time.perf_counter() - t0))
            want = set(np.argsort(-ref, kind="stable")[:GAMMA])
            have = set(np.argsort(-got, kind="stable")[:GAMMA])
            overlap.append(len(want & have) / GAMMA)
            work.append(senders(op, s, cfg.ppr_damping, tol, cfg.ppr_max_iterations))
        rows.append(
            {
                "tolerance": tol,
                "top_overlap_mean": round(float(np.mean(overlap)), 4),
                "top_overlap_min": round(float(np.min(overlap)), 4),
                "senders_per_run_mean": round(float(np.mean(work)), 1),
                "ms_per_run_p50": round(float(np.percentile(ms, 50)), 2),
            }
        )
        print(rows[-1], flush=True)
    emit(
        {
            "collection": args.collection,
            "tokens": op.n,
            "relationships": op.relationships,
            "gamma": GAMMA,
            "seed_sets": len(seeds),
            "tolerances": rows,
            "command": " ".join(["python", *sys.argv]),
        },
        args.out,
    )
    engine.close()


if __name__ == "__main__":
    main()
