"""SEMANTIC kNN edges at scale: the exact all-pairs scan against the IVF candidate search
used above `semantic_approximate_above`, same run, same vectors: build seconds, the share of
the exact edges found, and the edges' weights (re-scored exactly either way).

    NEORAG_BACKEND=neo4j python bench/knn_edges_bench.py --collection eval-2wiki-dev \
        --sizes 20000,50000,100000 --out bench/out/knn-edges.json

The seed vectors are a collection's real MiniLM chunk embeddings; above their count the set
is grown as bench/ann_bench.py grows it (a random point between two real vectors plus noise
calibrated to the real nearest-neighbour cosine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import ann_bench  # noqa: E402

from app.services import open_store  # noqa: E402
from app.settings import load_settings  # noqa: E402
from bench.json_out import emit  # noqa: E402
from ingest.config import EdgeConfig  # noqa: E402
from ingest.edges import topk  # noqa: E402
from ingest.edges.vectors import Approximate, dense_space  # noqa: E402


def build(ids: list[str], rows: list[np.ndarray], cfg: EdgeConfig, approximate: bool):
    above = 0 if approximate else len(ids)
    space = dense_space(
        ids,
        rows,
        cfg.semantic_min_cosine,
        Approximate(above, cfg.semantic_ivf_nprobe, cfg.semantic_ivf_depth),
    )
    t0 = time.perf_counter()
    edges = topk.build(space, "SEMANTIC", cfg.semantic_k, lambda s: min(s, 1.0)).weights
    return edges, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection", required=True)
    ap.add_argument("--sizes", default="20000,50000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = load_settings().for_collection(args.collection)
    store = open_store(settings)
    try:
        real = np.stack(list(store.chunk_vectors("embedding").values())).astype(np.float32)
    finally:
        store.close()
    noise, _, _ = ann_bench.calibrate_noise(ann_bench.unit(real), args.seed)
    cfg = EdgeConfig()
    rows_out = []
    for size in map(int, args.sizes.split(",")):
        vectors = ann_bench.synthesize(ann_bench.unit(real), size, noise, args.seed)
        ids = [f"c{i:07d}" for i in range(len(vectors))]
        rows = list(vectors)
        exact, exact_s = build(ids, rows, cfg, approximate=False)
        found, approx_s = build(ids, rows, cfg, approximate=True)
        shared = set(exact) & set(found)
        same_weight = all(found[k] == exact[k] for k in shared)
        row = {
            "chunks": len(ids),
            "real_vectors": len(real),
            "exact_seconds": round(exact_s, 2),
            "ivf_seconds": round(approx_s, 2),
            "speed-up": round(exact_s / approx_s, 2),
            "exact_edges": len(exact),
            "ivf_edges": len(found),
            "edge_recall": round(len(shared) / max(len(exact), 1), 4),
            "shared_weights_identical": same_weight,
            "load_average": round(os.getloadavg()[0], 2),
        }
        print(row, flush=True)
        rows_out.append(row)
    emit(
        {
            "k": cfg.semantic_k,
            "min_cosine": cfg.semantic_min_cosine,
            "nprobe": cfg.semantic_ivf_nprobe,
            "depth": cfg.semantic_ivf_depth,
            "noise": noise,
            "sizes": rows_out,
            "command": " ".join(["python bench/knn_edges_bench.py", *sys.argv[1:]]),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
