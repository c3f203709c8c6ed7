"""The chunk-edge stage of a one-document change with and without the edge workspace, in one
run on one collection, the two alternating so machine load falls on both alike.

    python bench/edge_workspace_bench.py --backend neo4j --collection bench-scale-200000 \\
        --data-dir .neorag/bench-scale --reps 3 --out bench/out/edge-workspace-200k.json

Each repeat rewrites one document (its stored chunks, same content, a new write: what a
re-ingest of a changed passage does to the edge stage), then refreshes the edges either
reading every chunk back from the store (`store`, the route before the workspace) or
reading the workspace and only the rewritten document (`workspace`). After a `store` round
the workspace is brought up to date untimed, as an ingest would have left it. The edges
written are the same either way (the tests hold both to a fresh build); what differs is
what is read. Wall and process CPU seconds, min and median per route, and the ratio of
medians. The collection must exist (`bench/scale_bench.py` leaves one per size).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def main() -> None:
    from app.services import index_dir, open_store
    from app.settings import Settings
    from bench.json_out import emit
    from graph.types import GraphDelta
    from ingest.edges.corpus import EdgeCorpus
    from ingest.edges.journal import STATE_KEY, JournalWriter
    from ingest.edges.maintain import refresh_chunk_edges
    from ingest.edges.workspace import FILE_NAME, EdgeWorkspace
    from ingest.tokens import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="neo4j", choices=["embedded", "neo4j"])
    parser.add_argument("--collection", required=True)
    parser.add_argument("--data-dir", type=Path, default=REPO / ".neorag" / "bench-scale")
    parser.add_argument("--reps", type=int, default=3, help="rounds per route")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = Settings(backend=args.backend, data_dir=args.data_dir, collection=args.collection)
    analyzer = Analyzer(settings.ingest.tokens)
    cfg = settings.ingest.edges
    workspace = EdgeWorkspace(index_dir(settings) / FILE_NAME)
    rounds: list[dict[str, object]] = []
    with open_store(settings) as store:
        first = refresh_chunk_edges(store, cfg, analyzer, workspace=workspace)
        if first.source != "workspace" or not workspace.path.exists():
            workspace.replace(EdgeCorpus(store.corpus(), analyzer), store.get_meta(STATE_KEY))
        chunks_total = store.chunk_count()
        doc_ids = sorted(store.documents())
        for i in range(2 * args.reps):
            route = ("workspace", "store")[i % 2]
            doc_id = doc_ids[(i * 997 + 13) % len(doc_ids)]
            docs = store.documents()
            chunks = store.document_chunks([doc_id])  # untimed setup: the same content again
            tokens = store.chunk_tokens([doc_id])
            for c in chunks:
                c.tokens = tokens.get(c.id, ())
            record = dataclasses.replace(docs[doc_id], ingested_at=time.time())
            delta = GraphDelta(remove_doc_ids=[doc_id], add=[(record, chunks)])
            delta.meta = JournalWriter(store, docs).record([doc_id], [doc_id], analyzer)
            store.apply(delta)
            c0, t0 = time.process_time(), time.perf_counter()
            edges = refresh_chunk_edges(
                store, cfg, analyzer, workspace=workspace if route == "workspace" else None
            )
            one = {
                "route": route,
                "document": doc_id,
                "chunks": len(chunks),
                "mode": edges.mode,
                "source": edges.source,
                "seconds": round(time.perf_counter() - t0, 3),
                "cpu_seconds": round(time.process_time() - c0, 3),
                "stages": edges.seconds,
            }
            print(f"[bench] {one}", file=sys.stderr, flush=True)
            rounds.append(one)
            if route == "store":
                workspace.replace(EdgeCorpus(store.corpus(), analyzer), store.get_meta(STATE_KEY))

    def summary(route: str, key: str) -> dict[str, float]:
        values = [float(r[key]) for r in rounds if r["route"] == route]  # type: ignore[arg-type]
        return {"min": min(values), "median": round(statistics.median(values), 3)}

    result: dict[str, object] = {
        "backend": args.backend,
        "collection": args.collection,
        "chunks": chunks_total,
        "command": " ".join(["python", "bench/edge_workspace_bench.py", *sys.argv[1:]]),
    }
    medians: dict[str, dict[str, dict[str, float]]] = {
        route: {k: summary(route, k) for k in ("seconds", "cpu_seconds")}
        for route in ("store", "workspace")
    }
    result.update(medians)
    for key in ("seconds", "cpu_seconds"):
        store_median = max(medians["store"][key]["median"], 1e-9)
        ratio = medians["workspace"][key]["median"] / store_median
        result[f"workspace_over_store_{key}"] = round(ratio, 3)
    result["rounds"] = rounds
    emit(result, args.out)


if __name__ == "__main__":
    main()
