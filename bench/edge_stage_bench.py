"""The chunk-edge and analytics stages of a one-document change, timed in isolation and
repeated, so that a busy machine's noise can be read off: wall and process CPU seconds
(all threads), min and median of the repeats.

    python bench/edge_stage_bench.py .neorag/bench/base --reps 5 --out bench/out/edge-stage.json

Works on a copy of an indexed embedded store: the `default` collection's under the data dir
(`embedded/collections/default/graph.sqlite`, or `embedded/graph.sqlite` as written before
collections), or a store file named directly. Each
repeat rewrites one document (its stored chunks, same content, new write: what a re-ingest
of a changed passage does to the edge stage) and times the stages that follow. Run from a
checkout of the previous code (before incremental edges) it times what that code did
instead: every chunk edge rebuilt and the full analytics pass. Stored facts are reused, so
no model is loaded.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _store_file(path: Path) -> Path:
    layouts = (Path("embedded/collections/default/graph.sqlite"), Path("embedded/graph.sqlite"))
    for candidate in (path, *(path / layout for layout in layouts)):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"no embedded store file at or under {path}")


def main() -> None:
    from app.settings import Settings
    from bench.json_out import emit
    from graph.embedded.store import EmbeddedStore
    from graph.types import GraphDelta
    from ingest.tokens import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = Settings()
    analyzer = Analyzer(settings.ingest.tokens)
    try:
        from ingest.analytics_refresh import refresh_analytics
        from ingest.edges.journal import JournalWriter
        from ingest.edges.maintain import refresh_chunk_edges

        code = "incremental"
    except ImportError:
        from ingest.edges import build_chunk_edges

        code = "rebuild"

    with tempfile.TemporaryDirectory(prefix="neorag-edge-bench-") as tmp:
        db = Path(tmp) / "graph.sqlite"
        shutil.copy(_store_file(args.data_dir), db)
        store = EmbeddedStore(db)
        if code == "incremental":  # bring the copy's edge state up to date first
            refresh_chunk_edges(store, settings.ingest.edges, analyzer)
            refresh_analytics(store, settings.algorithms, settings.ingest.analytics, added=None)
        docs = store.documents()
        doc_ids = sorted(docs)
        rounds = []
        for i in range(args.reps):
            doc_id = doc_ids[(i * 997 + 13) % len(doc_ids)]
            chunks = [c for c in store.corpus() if c.doc_id == doc_id]  # untimed setup
            tokens = store.chunk_tokens([doc_id])
            for c in chunks:
                c.tokens = tokens.get(c.id, ())
            record = dataclasses.replace(docs[doc_id], ingested_at=time.time())
            meta = (
                JournalWriter(store, docs).record([doc_id], [doc_id], analyzer)
                if code == "incremental"
                else {}
            )
            delta = GraphDelta(remove_doc_ids=[doc_id], add=[(record, chunks)])
            if meta:
                delta.meta = meta
            store.apply(delta)
            docs = store.documents()
            one: dict[str, object] = {"document": doc_id, "chunks": len(chunks)}
            c0 = time.process_time()
            t0 = time.perf_counter()
            if code == "incremental":
                edges = refresh_chunk_edges(store, settings.ingest.edges, analyzer)
                one["edge_mode"] = edges.mode
                one["edges_written"], one["edges_deleted"] = edges.written, edges.deleted
                one["edges"] = round(time.perf_counter() - t0, 3)
                one["edges_cpu"] = round(time.process_time() - c0, 3)
                c0 = time.process_time()
                t0 = time.perf_counter()
                run = refresh_analytics(
                    store,
                    settings.algorithms,
                    settings.ingest.analytics,
                    added=edges.added if edges.mode == "update" else None,
                    removed=len(edges.removed),
                )
                one["analytics_mode"] = run.mode
            else:
                kinds = build_chunk_edges(store.corpus(), settings.ingest.edges, analyzer)
                store.replace_chunk_edges([e for es in kinds.values() for e in es])
                one["edges"] = round(time.perf_counter() - t0, 3)
                one["edges_cpu"] = round(time.process_time() - c0, 3)
                c0 = time.process_time()
                t0 = time.perf_counter()
                store.run_analytics(settings.algorithms)
                one["analytics_mode"] = "full"
            one["analytics"] = round(time.perf_counter() - t0, 3)
            one["analytics_cpu"] = round(time.process_time() - c0, 3)
            print(f"[bench] {one}", file=sys.stderr)
            rounds.append(one)
        chunks_total = store.status().chunks
        store.close()

    def summary(key: str) -> dict[str, float]:
        values = [float(r[key]) for r in rounds]  # type: ignore[arg-type]
        return {"min": min(values), "median": round(statistics.median(values), 3)}

    result = {
        "code": code,
        "store": str(args.data_dir),
        "chunks": chunks_total,
        "command": " ".join(["python", "bench/edge_stage_bench.py", *sys.argv[1:]]),
        "edges_seconds": summary("edges"),
        "edges_cpu_seconds": summary("edges_cpu"),
        "analytics_seconds": summary("analytics"),
        "analytics_cpu_seconds": summary("analytics_cpu"),
        "rounds": rounds,
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
