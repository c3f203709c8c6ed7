"""Where the time of one GDS token PageRank goes: variants of cypher/token_ppr.cypher's
configuration on an evaluation collection, interleaved question by question.

    python bench/gds_ppr_variants.py ../shared/datasets/2wiki-dev \
        --out bench/out/gds-ppr-variants-2wiki-dev.json

The collection is the one `neorag eval DATASET --backend neo4j` indexed (run that first).
Each variant runs on the question's token seeds, as TIGRAG's first round does; the top-30
tokens are checked to be the same as the shipped query's (concurrency may reorder ties).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.json_out import emit  # noqa: E402

# The shipped statement with its configuration map opened up; {extra} adds options and
# {iterations} sets maxIterations (1 isolates the fixed cost of a call).
TEMPLATE = """MATCH (t:Token {{collection: $collection}}) WHERE t.text IN $seeds
WITH collect(t) AS sources WHERE size(sources) > 0
CALL gds.pageRank.stream($name, {{sourceNodes: sources, dampingFactor: 0.85,
  maxIterations: {iterations}, tolerance: 1e-7, relationshipWeightProperty: 'weight',
  concurrency: {concurrency}{extra}}})
YIELD nodeId, score
WITH nodeId, score {where} ORDER BY score DESC LIMIT 30
RETURN gds.util.asNode(nodeId).text AS token, score"""
VARIANTS = {
    "shipped": {},
    "logProgress false": {"extra": ", logProgress: false"},
    "sudo": {"extra": ", logProgress: false, sudo: true"},
    "score > 0 filter": {"where": "WHERE score > 0"},
    "concurrency 2": {"concurrency": 2},
    "1 superstep (fixed cost)": {"iterations": 1},
}


def statement(**overrides: object) -> str:
    values = {"iterations": 10, "concurrency": 1, "extra": "", "where": ""} | overrides
    return TEMPLATE.format(**values)


def main() -> None:
    from app.eval.harness import Dataset, eval_settings
    from app.eval.metrics import percentile
    from app.services import open_store
    from app.settings import Settings
    from ingest.tokens import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    dataset = Dataset.load(args.dataset)
    settings = eval_settings(Settings(backend="neo4j"), dataset)
    analyzer = Analyzer(settings.ingest.tokens)
    with open_store(settings) as store:
        vocab = set(store.term_matrix().vocabulary)
        seeds = [sorted({t for t in analyzer.tokens(q["question"]) if t in vocab})
                 for q in dataset.questions]  # fmt: skip
        seeds = [s for s in seeds if s][: args.questions]
        name = store.gds.projection("tokens", min_weight=settings.algorithms.token_min_weight)
        queries = {label: statement(**v) for label, v in VARIANTS.items()}

        def run(query: str, s: list[str]) -> list[str]:
            records, _, _ = store.gds_driver.execute_query(
                query, {"collection": store.collection, "seeds": s, "name": name},
                database_=store.cfg.database,
            )  # fmt: skip
            return [r["token"] for r in records]

        for s in seeds[:5]:  # warm-up
            for query in queries.values():
                run(query, s)
        latencies: dict[str, list[float]] = {label: [] for label in queries}
        same: dict[str, int] = {label: 0 for label in queries}
        for s in seeds:
            reference = None
            for label, query in queries.items():
                t0 = time.perf_counter()
                tokens = run(query, s)
                latencies[label].append((time.perf_counter() - t0) * 1000)
                reference = tokens if reference is None else reference
                same[label] += tokens == reference
    report = {
        "dataset": dataset.name,
        "projection": name,
        "questions": len(seeds),
        "variants": {
            label: {
                "p50_ms": round(percentile(v, 50), 1),
                "p95_ms": round(percentile(v, 95), 1),
                "same_top30": same[label],
            }
            for label, v in latencies.items()
        },
        "command": " ".join(["python", "bench/gds_ppr_variants.py", *sys.argv[1:]]),
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
