"""What the query process's copy of the token graph costs on a Neo4j collection: the
seconds to load it and the memory it holds (README, Speed: the token PageRank's local
route), next to the size of the projection it copies.

    NEO4J_URI=bolt://127.0.0.1:7693 NEO4J_PASSWORD=… python bench/token_mirror_cost.py \
        --collection bench-scale-200000 --out bench/out/token-mirror-cost-200k.json

Memory is the process's resident set before and after one load (the copy's edges are
read in one read transaction, turned into the sparse operator PageRank runs on, and the
rows dropped): what each query process pays once per published version. `--reps` loads it
again into fresh mirrors (the driver and imports warm) and reports each load's seconds.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.json_out import current_commit, emit  # noqa: E402


def rss_mb() -> float:
    """Resident set size of this process, in MB (Linux /proc)."""
    with open(f"/proc/{os.getpid()}/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> None:
    from app.settings import load_settings
    from graph.neo4j.store import Neo4jStore
    from graph.neo4j.token_mirror import TokenMirror

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", required=True)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    settings = load_settings()
    cfg = settings.algorithms.model_copy(update={"token_ppr": "local"})
    store = Neo4jStore(settings.neo4j, args.collection)
    try:
        name = store.gds.projection("tokens", min_weight=cfg.token_min_weight)
        size = store.read("projection_size_tokens", min_weight=cfg.token_min_weight)[0]
        gc.collect()
        loads, rss = [], []
        keep: list[TokenMirror] = []
        for _ in range(args.reps):
            mirror = TokenMirror(store)
            before = rss_mb()
            t0 = time.perf_counter()
            assert mirror.load(name, cfg), "the copy was declined (graph changed while read?)"
            loads.append(round(time.perf_counter() - t0, 2))
            gc.collect()
            rss.append(round(rss_mb() - before, 1))
            keep[:] = [mirror]  # the previous copy goes only after this one is measured
            print(f"[bench] load {loads[-1]} s, +{rss[-1]} MB resident", file=sys.stderr)
    finally:
        store.close()
    emit(
        {
            "command": " ".join(["python bench/token_mirror_cost.py", *sys.argv[1:]]),
            "commit": current_commit(),
            "collection": args.collection,
            "projection": name,
            "token_min_weight": cfg.token_min_weight,
            "nodes": size.get("nodes"),
            "relationships": size["relationships"],
            "load_seconds": loads,
            "resident_mb_added": rss,
            "load_average": round(os.getloadavg()[0], 2),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
