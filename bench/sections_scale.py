"""The scale suite's blocks of docs/results.md: what ingest, change and serving cost per
size and backend, serving from the database against in process, and the capacity model's
projection of serving past the measured sizes."""

from __future__ import annotations

from typing import Any

from bench.figures import Figures, grid, provenance, rounded
from bench.suites.capacity import SERVING_KEYS

BACKENDS = ("embedded", "neo4j")


def scale(figures: Figures) -> str:
    """Two tables per the scale suite's sizes: what an ingest and a change cost, then what
    serving costs (a cold `neorag api` to ready, its first and steady answers, its memory)."""
    header = ["backend", "chunks", "documents", "ingest s", "embed only s", "ingest / embed"]
    header += ["vectors reused", "ingest peak RSS MB", "store MB"]
    header += ["one-doc change s: in process / via the API / command"]
    serving = ["backend", "chunks", "ready s", "first answer ms", "served p50 / p95 ms"]
    serving += ["largest process RSS MB", "server tree PSS MB", "p50 / p95 ms default"]
    serving += ["p50 ms tigrag", "R@5 default / tigrag / hybrid", "change answered from s"]
    rows, serve_rows, sources = [], [], []
    for backend in BACKENDS:
        name = f"scale-{backend}"
        report = figures.get(name)
        for s in report["sizes"]:
            p50, p95, r5 = s.get("query_p50_ms", {}), s.get("query_p95_ms", {}), s["recall@5"]
            rows.append(
                [
                    backend,
                    rounded(s["chunks"]),
                    rounded(s["documents"]),
                    rounded(s.get("ingest_seconds")),
                    rounded(s.get("embed_only_seconds")),
                    rounded(s.get("ingest_over_embed"), 2),
                    rounded(s.get("vectors_reused")),
                    rounded(s.get("peak_rss_mb")),
                    rounded(s.get("store_mb")),
                    " / ".join(
                        rounded(s.get(k), 2)
                        for k in (
                            "one_doc_change_seconds",
                            "one_doc_change_api_seconds",
                            "one_doc_change_command_seconds",
                        )
                    ),
                ]
            )
            memory = s.get("serving_memory", {})
            # Rows from before the serving step timed an engine inside the benchmark's own
            # process, not a server's start: not what this column means.
            ready = s.get("engine_warm_up_seconds") if memory else None
            serve_rows.append(
                [
                    backend,
                    rounded(s["chunks"]),
                    rounded(ready),
                    rounded(s.get("first_query_ms")),
                    f"{rounded(s.get('served_p50_ms'))} / {rounded(s.get('served_p95_ms'))}",
                    rounded(s.get("serving_rss_mb")),
                    rounded(memory.get("tree_pss_mb")),
                    f"{rounded(p50.get('default'))} / {rounded(p95.get('default'))}",
                    rounded(p50.get("tigrag")),
                    " / ".join(rounded(r5.get(m)) for m in ("default", "tigrag", "hybrid")),
                    rounded(s.get("api_change_visible_seconds")),
                ]
            )
        sources.append(_rows_provenance(name, report))
    return (
        grid(header, rows)
        + "\n\n"
        + grid(serving, serve_rows)
        + "\n\n"
        + "\n".join(f"- {s}" for s in sources)
        + "\n\n"
        + database_serving(figures.get("scale-neo4j"))
    )


def _rows_provenance(name: str, report: dict[str, Any]) -> str:
    """The file and, per size, the run (and the serving runs) its row merges: the sizes of
    one file were measured at different commits."""
    parts = []
    for s in report["sizes"]:
        runs = [
            f"{label} {r['commit']} {r.get('date', '')}".strip()
            for label, key in (("run", "run"), ("served", "serve_run"))
            if (r := s.get(key)) and r.get("commit")
        ]
        parts.append(f"{rounded(s['chunks'])}: {', '.join(runs) or 'commit not recorded'}")
    return f"Source `bench/out/{name}.json` · " + "; ".join(parts)


def database_serving(report: dict[str, Any]) -> str:
    """Each Neo4j size served both ways: the API holding the indexes in process against
    the API answering from Neo4j's indexes and GDS (retrieval.serving=database)."""
    header = ["chunks", "serving", "ready s", "first answer ms", "served p50 / p95 ms"]
    header += ["API RSS MB", "p50 / p95 ms default", "p50 / p95 ms hybrid"]
    header += ["R@5 default / hybrid", "MRR default"]
    rows = []
    for s in report["sizes"]:
        if "database_serving" not in s:
            continue
        for label, r in (("in process", s), ("database", s["database_serving"])):
            p50, p95 = r.get("query_p50_ms", {}), r.get("query_p95_ms", {})
            r5 = r.get("recall@5", {})
            rows.append(
                [
                    rounded(s["chunks"]),
                    label,
                    rounded(r.get("engine_warm_up_seconds")),
                    rounded(r.get("first_query_ms")),
                    f"{rounded(r.get('served_p50_ms'))} / {rounded(r.get('served_p95_ms'))}",
                    rounded(r.get("serving_rss_mb")),
                    f"{rounded(p50.get('default'))} / {rounded(p95.get('default'))}",
                    f"{rounded(p50.get('hybrid'))} / {rounded(p95.get('hybrid'))}",
                    " / ".join(rounded(r5.get(m)) for m in ("default", "hybrid")),
                    rounded(r.get("mrr", {}).get("default"), key="mrr"),
                ]
            )
    if not rows:
        return "Database serving: no Neo4j size of the scale suite has been measured with it yet."
    return (
        "Database serving against the indexes in process, on Neo4j (under database serving\n"
        "`default` is TIGRAG; in process it is the fused default mode):\n\n" + grid(header, rows)
    )


def capacity_serving(figures: Figures) -> str:
    """The capacity model's serving projection (bench/out/capacity.json `serving`): per
    backend, each figure fitted through the smallest and largest measured size and carried
    to the projected sizes; on Neo4j also the route that serves from the database."""
    report = figures.get("capacity")
    serving = report.get("serving") or {}
    if not serving:
        return "The capacity model has no serving projection yet (no scale size ran `serve`)."
    header = ["backend", "chunks", "ready s", "API RSS MB", "server tree PSS MB", "store MB"]
    header += ["ingest peak RSS MB", "one-doc change s", "via the API s", "fits 24 GB"]
    rows, notes = [], []
    for backend, model in serving.items():
        for r in model["rows"]:
            rows.append(
                [backend, rounded(r["chunks"])]
                + [rounded(r.get(k)) for k in SERVING_KEYS]
                + ["yes" if r["fits_machine"] else "no"]
            )
        database = model.get("database_serving") or {}
        for r in database.get("rows", []):
            rows.append(
                [f"{backend}, database serving", rounded(r["chunks"])]
                + [rounded(r.get("engine_warm_up_seconds")), rounded(r.get("serving_rss_mb"))]
                + ["–"] * (len(SERVING_KEYS) - 1)
            )
        notes.append(
            f"{backend}: fitted on {len(model['measured'])} measured sizes, the largest "
            f"{rounded(model['largest_measured'])} chunks"
        )
        if database.get("in_process_passes_replica_budget_at"):
            notes.append(
                f"{backend}: an API process serving in process passes a replica's "
                f"{rounded(database['replica_budget_mb'])} MB at about "
                f"{rounded(database['in_process_passes_replica_budget_at'])} chunks; past it a "
                "replica serves from the database"
            )
    notes.append(provenance("capacity", report, "python -m bench capacity"))
    return grid(header, rows) + "\n\n" + "\n".join(f"- {n}" for n in notes)
