"""The shape of a collection's token co-occurrence graph: pairs by weight, and what the
`token_min_weight` cut keeps (the graph PageRank runs on).

    NEORAG_DATA_DIR=DIR python bench/token_graph_stats.py --collection eval-2wiki-dev \
        --out bench/out/token-graph-2wiki-dev.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.services import open_store
from app.settings import load_settings
from bench.json_out import emit


def stats(adjacency: sparse.csr_matrix, min_weight: int) -> dict[str, object]:
    upper = sparse.triu(adjacency, k=1).tocoo()
    weights = upper.data
    pairs = int(weights.size)
    kept = int((weights >= min_weight).sum())
    return {
        "tokens": int(adjacency.shape[0]),
        "pairs": pairs,
        "pairs_weight_1": int((weights == 1).sum()),
        "share_weight_1": round(float((weights == 1).mean()), 4) if pairs else None,
        "min_weight": min_weight,
        "pairs_kept": kept,
        "share_kept": round(kept / pairs, 4) if pairs else None,
        "projected_relationships_undirected": 2 * kept,
        "weight_percentiles": {str(q): float(np.percentile(weights, q)) for q in (50, 90, 99)}
        if pairs
        else {},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection", required=True)
    ap.add_argument("--backend", default=None)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = load_settings()
    if args.backend:
        settings = settings.model_copy(update={"backend": args.backend})
    settings = settings.for_collection(args.collection)
    store = open_store(settings)
    try:
        _, adjacency = store.token_graph()
    finally:
        store.close()
    result = {
        "collection": args.collection,
        "backend": settings.backend,
        **stats(adjacency, settings.algorithms.token_min_weight),
        "command": " ".join(["python bench/token_graph_stats.py", *sys.argv[1:]]),
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
