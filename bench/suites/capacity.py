"""Capacity model: what a collection of N chunks needs, extrapolated from measured sizes.

    python -m bench capacity            # needs NEO4J_URI/NEO4J_PASSWORD for GDS
    python -m bench capacity --chunks 1000000,10000000
    python -m bench capacity --token-graph eval-2wiki-dev   # one collection's token graph
    python -m bench capacity --files eval-2wiki-dev         # where its bytes on disk go

Inputs are the measured sizes in bench/out/scale-*.json (and bench/out/ingest-2wiki-dev.json):
graph counts (tokens, CO_OCCURS, RELATED), store size, ingest and embedding seconds. Each
count is fitted as a power law c·chunks^b through the smallest and largest measured size
(vocabulary grows sublinearly; with one size the exponent is 1, an upper bound). GDS's
own estimator (`gds.graph.project.estimate`) then gives each projection's heap for the
extrapolated node and relationship counts (the token projection keeps only pairs of weight
>= 2; all pairs are counted, an upper bound). Vector memory is the index's formula (float32
vectors; IVF lists add an int64 id each). Ingest hours scale the slowest measured seconds
per chunk (a scale run's CPU seconds over the two cores: those runs shared the machine);
without embedding, the largest share the embedding-only baseline does not explain: what a
GPU that embedded for free would leave. Output: bench/out/capacity.json
and a Markdown table.

`--files COLLECTION` reads one collection's folder instead: every file by size and, inside
each SQLite file, the bytes of each table and index (SQLite's page accounting, `dbstat`),
also per chunk, so the largest parts of the bytes per chunk are named before any is
changed (on Neo4j only the index files are local). Output: bench/out/files-COLLECTION.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
OUT = REPO / "bench" / "out"
DIMENSION = 384  # all-MiniLM-L6-v2
IVF_ID_BYTES = 8  # an IVF list stores each vector with its int64 id


def measured_points() -> list[dict[str, Any]]:
    """(chunks, tokens, co-occurrence pairs, related pairs, store MB, seconds) per size."""
    points = []
    ingest = OUT / "ingest-2wiki-dev.json"
    if ingest.exists():
        for r in json.loads(ingest.read_text())["results"]:
            s = r["status"]
            points.append(
                {
                    "source": f"ingest-2wiki-dev ({r['backend']})",
                    "chunks": s["chunks"],
                    "tokens": s["tokens"],
                    "co_occurs": s["edges"]["CO_OCCURS"],
                    "related": s["edges"]["RELATED"],
                    "ingest_seconds": r["ingest_seconds"],
                    "embed_only_seconds": r["embedding_only_seconds"],
                }
            )
    for path in sorted(OUT.glob("scale-*.json")):
        report = json.loads(path.read_text())
        for size in report["sizes"]:
            if "tokens" in size:
                points.append({"source": path.name, **size})
    return points


def power_law(points: list[dict[str, Any]], key: str) -> tuple[float, float]:
    usable = sorted((p for p in points if p.get(key)), key=lambda p: p["chunks"])
    small, large = usable[0], usable[-1]
    if large["chunks"] == small["chunks"]:
        return small[key] / small["chunks"], 1.0
    b = math.log(large[key] / small[key]) / math.log(large["chunks"] / small["chunks"])
    return small[key] / small["chunks"] ** b, b


CORES = 2  # this machine's: a CPU-second count over the cores is the wall time unshared


def _ingest_seconds(point: dict[str, Any]) -> float:
    """Wall seconds on this machine to itself: the scale runs' CPU seconds over the cores
    (they ran beside other work, which stretches wall time), else the measured wall time."""
    if point.get("ingest_cpu_seconds"):
        return float(point["ingest_cpu_seconds"]) / CORES
    return float(point["ingest_seconds"])


def _embed_share(point: dict[str, Any]) -> float:
    """The share of ingest the embedding-only baseline explains (CPU seconds when measured)."""
    if point.get("ingest_cpu_seconds") and point.get("embed_only_cpu_seconds"):
        return min(1.0, point["embed_only_cpu_seconds"] / point["ingest_cpu_seconds"])
    return min(1.0, point["embed_only_seconds"] / point["ingest_seconds"])


def model(chunk_counts: list[int], store: Any | None) -> dict[str, Any]:
    from graph.neo4j.capacity import estimate_graph

    points = measured_points()
    fits = {k: power_law(points, k) for k in ("tokens", "co_occurs", "related")}
    # Ingest time only from runs that embedded every chunk (not reusing an earlier run's)
    timed = [p for p in points if p.get("embed_only_seconds") and not p.get("vectors_reused")]
    seconds_per_chunk = max(_ingest_seconds(p) / p["chunks"] for p in timed)
    embed_share = min(_embed_share(p) for p in timed)
    rows = []
    for n in chunk_counts:
        tokens, pairs, related = (round(c * n**b) for c, b in fits.values())
        row: dict[str, Any] = {
            "chunks": n,
            "tokens": tokens,
            "co_occurs_pairs": pairs,
            "related_pairs": related,
            "vectors_flat_mb": round(n * DIMENSION * 4 / 2**20),
            "vectors_ivf_mb": round(n * (DIMENSION * 4 + IVF_ID_BYTES) / 2**20),
            "ingest_hours_cpu": round(n * seconds_per_chunk / 3600, 1),
            "ingest_hours_without_embedding": round(
                n * seconds_per_chunk * (1 - embed_share) / 3600, 1
            ),
        }
        if store is not None:
            # the token projection keeps pairs of weight >= 2; all pairs is the upper bound
            row["gds_tokens_mb"] = round(estimate_graph(store, tokens, 2 * pairs)[1] / 2**20)
            row["gds_chunks_mb"] = round(estimate_graph(store, n, 2 * related)[1] / 2**20)
        rows.append(row)
    return {
        "measured": points,
        "fits": {k: {"c": c, "b": round(b, 3)} for k, (c, b) in fits.items()},
        "embedding_share_of_ingest": round(embed_share, 3),
        "rows": rows,
        "serving": serving_model(chunk_counts),
    }


# What a serving deployment needs, per backend, fitted on the scale suite's sizes that ran
# the serving step (a cold `neorag api`): its readiness, the largest process's RSS and the
# server tree's PSS, the store on disk, the ingest's peak and a one-document change.
SERVING_KEYS = (
    "engine_warm_up_seconds",
    "serving_rss_mb",
    "tree_pss_mb",
    "store_mb",
    "peak_rss_mb",
    "one_doc_change_seconds",
    "one_doc_change_api_seconds",
)
MACHINE_MB = 24 * 1024
# A replica's memory budget (the scale issue's bound for a serving process): past the size
# at which in-process serving needs more, a replica serves from the database instead.
REPLICA_MB = 3 * 1024
DATABASE_KEYS = ("engine_warm_up_seconds", "serving_rss_mb", "served_p50_ms")


Fit = tuple[str, float, float]  # ("line", at zero, per chunk) or ("power", c, b)


def fitted(points: list[dict[str, Any]], key: str) -> Fit:
    """Memory (`*_mb`) as a line through the smallest and largest size: a fixed part (the
    model, the libraries) plus a cost per chunk, which a power law through two sizes
    dominated by the fixed part would flatten. Everything else as a power law."""
    if not key.endswith("_mb"):
        return ("power", *power_law(points, key))
    usable = sorted((p for p in points if p.get(key)), key=lambda p: p["chunks"])
    small, large = usable[0], usable[-1]
    span = large["chunks"] - small["chunks"]
    slope = max(0.0, (large[key] - small[key]) / span) if span else 0.0
    return ("line", small[key] - slope * small["chunks"], slope)


def at(fit: Fit, chunks: int) -> float:
    kind, first, second = fit
    return first + second * chunks if kind == "line" else first * chunks**second


def _size_at(fit: Fit, value: float) -> int | None:
    """The chunks at which the fit reaches `value` (None when it never grows)."""
    kind, first, second = fit
    if kind == "line":
        return round((value - first) / second) if second > 0 else None
    return round((value / first) ** (1 / second)) if second > 0 and first > 0 else None


def _described(fits: dict[str, Fit]) -> dict[str, dict[str, Any]]:
    return {k: {"kind": f[0], "a": round(f[1], 6), "b": round(f[2], 6)} for k, f in fits.items()}


def database_serving_model(sizes: list[dict[str, Any]], chunk_counts: list[int]) -> dict:
    """The same fits for the sizes served from the database (retrieval.serving=database),
    and the size at which the in-process API process passes a replica's budget."""
    served = [
        {"chunks": s["chunks"], **s["database_serving"]} for s in sizes if s.get("database_serving")
    ]
    if not served:
        return {}
    fits = {k: fitted(served, k) for k in DATABASE_KEYS if all(s.get(k) for s in served)}
    return {
        "measured": [{k: s.get(k) for k in ("chunks", *DATABASE_KEYS)} for s in served],
        "fits": _described(fits),
        "replica_budget_mb": REPLICA_MB,
        "in_process_passes_replica_budget_at": _size_at(
            fitted(sizes, "serving_rss_mb"), REPLICA_MB
        ),
        "rows": [
            {"chunks": n, **{k: round(at(f, n), 2) for k, f in fits.items()}} for n in chunk_counts
        ],
    }


def serving_model(chunk_counts: list[int]) -> dict[str, Any]:
    """Per backend: each figure fitted through the smallest and largest measured size
    (`fitted`: memory as a line, the rest as a power law), projected to `chunk_counts`,
    with whether the serving tree, the ingest and (on Neo4j) the server's share fit this
    machine; on Neo4j also the sizes served from the database."""
    out: dict[str, Any] = {}
    for path in sorted(OUT.glob("scale-*.json")):
        report = json.loads(path.read_text())
        sizes = [
            {**s, "tree_pss_mb": s["serving_memory"]["tree_pss_mb"]}
            for s in report["sizes"]
            if s.get("serving_memory")
        ]
        if len(sizes) < 2:
            continue
        fits = {k: fitted(sizes, k) for k in SERVING_KEYS if all(s.get(k) for s in sizes)}
        rows = []
        for n in chunk_counts:
            row: dict[str, Any] = {"chunks": n}
            for key, fit in fits.items():
                row[key] = round(at(fit, n), 2)
            row["fits_machine"] = all(
                row.get(k, 0) < MACHINE_MB for k in ("tree_pss_mb", "peak_rss_mb")
            )
            rows.append(row)
        out[report["backend"]] = {
            "measured": [{k: s.get(k) for k in ("chunks", *SERVING_KEYS)} for s in sizes],
            "fits": _described(fits),
            "largest_measured": max(s["chunks"] for s in sizes),
            "rows": rows,
            "database_serving": database_serving_model(sizes, chunk_counts),
        }
    return out


def markdown(report: dict[str, Any]) -> str:
    cols = list(report["rows"][0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(f"{r[c]:,}" for c in cols) + " |" for r in report["rows"]]
    return "\n".join(lines)


def token_stats(adjacency: Any, min_weight: int) -> dict[str, object]:
    """The shape of a token co-occurrence graph: pairs by weight, and what the
    `token_min_weight` cut keeps (the graph PageRank runs on)."""
    import numpy as np
    from scipy import sparse

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


def token_graph(collection: str, backend: str | None, out: Path | None) -> None:
    """`--token-graph COLLECTION`: one collection's token graph, from its store."""
    from app.services import open_store
    from app.settings import load_settings
    from bench.json_out import emit

    settings = load_settings()
    if backend:
        settings = settings.model_copy(update={"backend": backend})
    settings = settings.for_collection(collection)
    store = open_store(settings)
    try:
        _, adjacency = store.token_graph()
    finally:
        store.close()
    result = {
        "collection": collection,
        "backend": settings.backend,
        **token_stats(adjacency, settings.algorithms.token_min_weight),
        "command": " ".join(["python -m bench capacity", *sys.argv[1:]]),
    }
    emit(result, out or OUT / f"token-graph-{collection.removeprefix('eval-')}.json")


def sqlite_objects(path: Path) -> list[dict[str, Any]]:
    """Each table and index of one SQLite file with its bytes (pages × page size)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT name, SUM(pgsize) AS bytes, SUM(ncell) AS cells FROM dbstat "
            "GROUP BY name ORDER BY bytes DESC"
        ).fetchall()
        kinds = dict(con.execute("SELECT name, type FROM sqlite_master").fetchall())
    finally:
        con.close()
    return [
        {"name": name, "type": kinds.get(name, "internal"), "bytes": int(size), "cells": int(cells)}
        for name, size, cells in rows
    ]


def measure(folder: Path, chunks: int) -> dict[str, Any]:
    per = max(chunks, 1)
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: -p.stat().st_size)
    total = sum(p.stat().st_size for p in files)
    out_files = []
    for path in files:
        size = path.stat().st_size
        entry: dict[str, Any] = {
            "path": path.relative_to(folder).as_posix(),
            "bytes": size,
            "bytes_per_chunk": round(size / per, 1),
            "share": round(size / max(total, 1), 4),
        }
        if path.suffix == ".sqlite":
            objects = sqlite_objects(path)
            for o in objects:
                o["bytes_per_chunk"] = round(o["bytes"] / per, 1)
            entry["objects"] = objects
        out_files.append(entry)
    return {
        "chunks": chunks,
        "total_bytes": total,
        "bytes_per_chunk": round(total / per, 1),
        "files": out_files,
    }


def files(collection: str, backend: str | None, out: Path | None) -> None:
    """`--files COLLECTION`: where one collection's bytes on disk go."""
    from app.services import open_store
    from app.settings import load_settings
    from bench.json_out import emit

    settings = load_settings()
    if backend:
        settings = settings.model_copy(update={"backend": backend})
    settings = settings.for_collection(collection)
    with open_store(settings) as store:
        chunks = store.status().chunks
    result = {
        "collection": collection,
        "backend": settings.backend,
        **measure(settings.collection_dir, chunks),
        "command": " ".join(["python -m bench capacity", *sys.argv[1:]]),
    }
    emit(result, out or OUT / f"files-{collection.removeprefix('eval-')}.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", default="1000000,10000000")
    parser.add_argument("--no-neo4j", action="store_true", help="skip the GDS estimates")
    parser.add_argument(
        "--token-graph", metavar="COLLECTION", help="only report this collection's token graph"
    )
    parser.add_argument(
        "--files", metavar="COLLECTION", help="only report where this collection's bytes go"
    )
    parser.add_argument("--backend", help="with --token-graph or --files: the store's backend")
    parser.add_argument("--out", type=Path, help="with --token-graph or --files: the JSON file")
    args = parser.parse_args()
    if args.token_graph:
        token_graph(args.token_graph, args.backend, args.out)
        return
    if args.files:
        files(args.files, args.backend, args.out)
        return
    counts = [int(x) for x in args.chunks.split(",")]
    store = None
    if not args.no_neo4j:
        from app.settings import Settings
        from graph.neo4j.store import Neo4jStore

        store = Neo4jStore(Settings(backend="neo4j").neo4j, "default")
    try:
        report = model(counts, store)
    finally:
        if store is not None:
            store.close()
    from bench.json_out import current_commit

    report["command"] = " ".join(["python -m bench capacity", *sys.argv[1:]])
    report["commit"] = current_commit()
    report["date"] = time.strftime("%Y-%m-%d")
    (OUT / "capacity.json").write_text(json.dumps(report, indent=1) + "\n")
    print(markdown(report))


if __name__ == "__main__":
    main()
