"""TIGRAG's entity hops on Neo4j: read from the in-process hop table or from the server,
measured in one run, question by question, the order of the two alternating so that load
on the machine falls on both alike.

    python bench/neo4j_hop_reads.py ../shared/datasets/2wiki-dev \
        --out bench/out/neo4j-hop-reads-2wiki-dev.json

Indexes the dataset into its eval collection on the configured Neo4j (as `neorag eval
--backend neo4j` does; an existing index of the same dataset is reused), then for each mode
reports p50/p95 latency and R@5 per route, and the p50 ratio table/store.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine import Engine
from app.eval.harness import Dataset, ensure_index, eval_settings, gold_document_ids
from app.eval.metrics import recall_at_k, summarize
from app.retrieval.hop_table import hop_reads
from app.settings import load_settings
from bench.json_out import emit
from ingest.report import NoProgress

ROUTES = ("table", "store")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--modes", default="tigrag,default")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dataset = Dataset.load(args.dataset, args.limit)
    settings = eval_settings(load_settings().model_copy(update={"backend": "neo4j"}), dataset)
    ensure_index(settings, dataset, NoProgress())
    engine = Engine(settings)
    store = engine.store
    try:
        engine.require_index()
        copied = hop_reads(engine)
        t0 = time.perf_counter()
        if copied is None or not copied.wait(600):
            raise SystemExit(f"hop table not copied: {copied and copied.failed}")
        copy_seconds = round(time.perf_counter() - t0, 2)

        def use(route: str) -> None:
            if route == "table":
                store.__dict__.pop("remote", None)
            else:
                store.remote = False  # type: ignore[misc]

        results: dict[str, dict[str, dict[str, float]]] = {}
        for mode in args.modes.split(","):
            retriever = engine.retriever(mode)
            latency: dict[str, list[float]] = {r: [] for r in ROUTES}
            recall: dict[str, list[float]] = {r: [] for r in ROUTES}
            same = 0
            for route in ROUTES:  # warm-up
                use(route)
                retriever.retrieve(dataset.questions[0]["question"])
            for i, q in enumerate(dataset.questions):
                gold = gold_document_ids(settings, dataset, q["gold"])
                tops = []
                for route in ROUTES if i % 2 == 0 else ROUTES[::-1]:
                    use(route)
                    start = time.perf_counter()
                    result = retriever.retrieve(q["question"])
                    latency[route].append((time.perf_counter() - start) * 1000)
                    recall[route].append(recall_at_k(result.doc_ranking(), gold, 5))
                    tops.append([s.chunk_id for s in result.ranking[:5]])
                same += tops[0] == tops[1]
            use("table")
            row: dict[str, dict[str, float]] = {}
            for route in ROUTES:
                stats = summarize(latency[route])
                row[route] = {
                    "latency_ms_p50": round(stats["p50"], 2),
                    "latency_ms_p95": round(stats["p95"], 2),
                    "recall@5": round(100 * sum(recall[route]) / len(recall[route]), 2),
                }
            row["p50_ratio_table_over_store"] = {
                "value": round(row["table"]["latency_ms_p50"] / row["store"]["latency_ms_p50"], 3)
            }
            row["same_top5_share"] = {"value": round(same / len(dataset.questions), 4)}
            results[mode] = row
    finally:
        engine.close()
    emit(
        {
            "dataset": dataset.name,
            "questions": len(dataset.questions),
            "collection": settings.collection,
            "table_copy_seconds": copy_seconds,
            "load_average": os.getloadavg()[0],
            "results": results,
            "command": " ".join(["python bench/neo4j_hop_reads.py", *sys.argv[1:]]),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
