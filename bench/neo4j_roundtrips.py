"""What one small Neo4j read costs from Python: a bare `RETURN 1`, the index-version check,
and the reads TIGRAG makes per question (the context's chunks, one entity hop's CITES and
mentions), each p50 / min over repeated calls on an indexed collection.

    NEORAG_BACKEND=neo4j NEORAG_DATA_DIR=DIR python bench/neo4j_roundtrips.py \
        --collection eval-2wiki-dev --out bench/out/neo4j-roundtrips.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.services import open_store
from app.settings import load_settings
from bench.json_out import emit


def timed(call: Callable[[int], object], repeats: int) -> dict[str, float]:
    call(0)
    samples = []
    for i in range(repeats):
        start = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(statistics.median(samples), 2), "min_ms": round(min(samples), 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection", required=True)
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    settings = load_settings().for_collection(args.collection)
    store = open_store(settings)
    try:
        ids = store.chunk_ids()[:400]

        def five(i: int) -> list[str]:
            k = (5 * i) % max(len(ids) - 5, 1)
            return ids[k : k + 5]

        result = {
            "collection": args.collection,
            "repeats": args.repeats,
            "RETURN 1": timed(lambda i: store.driver.execute_query("RETURN 1"), args.repeats),
            "index version (meta_get)": timed(lambda i: store.get_meta("derived"), args.repeats),
            "context (get_chunks, 5)": timed(lambda i: store.get_chunks(five(i)), args.repeats),
            "entity hop (citations_and_mentions, 5)": timed(
                lambda i: store.citations_and_mentions(five(i)), args.repeats
            ),
            "command": " ".join(["python bench/neo4j_roundtrips.py", *sys.argv[1:]]),
        }
    finally:
        store.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
