"""What the full analytics pass costs by corpus size, and how far patched communities drift
from a fresh Leiden run (embedded backend, in-process algorithms).

    python bench/analytics_bench.py DATA_DIR [--collection NAME] --out bench/out/analytics-X.json

Reads the RELATED graph of a collection's embedded store (`DATA_DIR`'s `NAME`, as
`neorag --collection NAME` with `NEORAG_DATA_DIR=DATA_DIR` reads it), times
Leiden, FastRP and spectral coordinates on the subgraphs induced by random samples of its
documents (nested, seeded), and compares the stored communities with a fresh Leiden run
over the whole graph (NMI and adjusted Rand index) — after `bench/change_bench.py` the
stored ones are the patched ones — next to Leiden's own variability (fresh runs on graphs
one document apart). Wall-clock seconds on a shared machine: indicative.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    import igraph
    import numpy as np

    from app.services import store_path
    from app.settings import Settings
    from bench.json_out import emit
    from graph.algorithms.fastrp import fastrp
    from graph.algorithms.leiden import leiden
    from graph.algorithms.spectral import spectral_coordinates
    from graph.config import AlgorithmConfig
    from graph.embedded.store import EmbeddedStore

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--collection", default="default")
    parser.add_argument("--sizes", default="500,1000,2000,4000")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cfg = AlgorithmConfig()
    settings = Settings(backend="embedded", data_dir=args.data_dir, collection=args.collection)
    if not store_path(settings).is_file():
        sys.exit(f"no embedded store for collection {args.collection!r} in {args.data_dir}")
    store = EmbeddedStore(store_path(settings), settings.collection)
    graph = store._memory.chunk_graph()
    ids, adj = graph.ids, graph.adj
    doc_of = np.array([c.rsplit("#", 1)[0] for c in ids])
    docs = sorted(set(doc_of))
    random.Random(0).shuffle(docs)
    sizes = []
    for target in [int(s) for s in args.sizes.split(",")] + [len(ids)]:
        keep_docs, n = set(), 0
        for d in docs:
            if n >= target:
                break
            keep_docs.add(d)
            n += int((doc_of == d).sum()) if target < len(ids) else 0
        rows = np.flatnonzero(np.isin(doc_of, list(keep_docs))) if target < len(ids) else None
        sub = adj if rows is None else adj[rows][:, rows].tocsr()
        timing: dict[str, float] = {}
        t0 = time.perf_counter()
        leiden(sub, cfg)
        timing["leiden"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        fastrp(sub, cfg)
        timing["fastrp"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        spectral_coordinates(sub, cfg.spectral_dimension)
        timing["spectral"] = round(time.perf_counter() - t0, 3)
        sizes.append(
            {
                "chunks": sub.shape[0],
                "related_edges": int(sub.nnz // 2),
                "seconds": timing,
                "total": round(sum(timing.values()), 3),
            }
        )
        print(f"[bench] {sizes[-1]}", file=sys.stderr)
    stored = store.chunk_communities()
    labels, _ = leiden(adj, cfg)
    have = [i for i, c in enumerate(ids) if c in stored]
    a = [stored[ids[i]] for i in have]
    b = [int(labels[i]) for i in have]
    # Leiden's own variability: a fresh run on the graph without one document against the
    # fresh run on the whole graph, over the chunks both have.
    reference = []
    for d in docs[:3]:
        rows = np.flatnonzero(doc_of != d)
        other, _ = leiden(adj[rows][:, rows].tocsr(), cfg)
        reference.append(
            round(igraph.compare_communities(list(other), list(labels[rows]), method="nmi"), 4)
        )
    result = {
        "store": str(args.data_dir),
        "collection": args.collection,
        "command": " ".join(["python", "bench/analytics_bench.py", *sys.argv[1:]]),
        "sizes": sizes,
        "stored_vs_fresh_leiden": {
            "chunks_with_a_community": len(have),
            "chunks": len(ids),
            "nmi": round(igraph.compare_communities(a, b, method="nmi"), 4),
            "ari": round(igraph.compare_communities(a, b, method="adjusted_rand"), 4),
        },
        "fresh_vs_fresh_one_document_apart_nmi": reference,
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
