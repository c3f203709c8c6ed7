"""Per-query personalised PageRank on a dataset's token graph: GDS (server-side, over Bolt)
versus the embedded in-process implementation, plus the GDS projection time.

    python -m bench ppr ../shared/datasets/2wiki-dev --out bench/out/ppr-2wiki.json

Seeds are each question's tokens that occur in the graph (what TIGRAG's first round uses);
the top-γ tokens are returned, as in retrieval. Both backends index the dataset through the
evaluation harness's cache (NEORAG_DATA_DIR), so a warm run does not re-index.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.json_out import emit  # noqa: E402
from graph.base import GraphStore  # noqa: E402 - after the path set-up
from graph.config import AlgorithmConfig  # noqa: E402


class _StoreOnly:
    """What app.retrieval.spectrag.expand needs of an engine."""

    def __init__(self, store: object) -> None:
        self.store = store


def candidate_ppr_latencies(
    store: GraphStore, seeds: list[dict[str, float]], cfg: AlgorithmConfig
) -> list[float]:
    """SpectRAG's diffusion step: PPR over the RELATED subgraph induced by ~200 candidates
    (BM25 top 40 of the question, expanded two hops), seeded by the top 10."""
    from app.retrieval.spectrag import expand
    from graph.lexical import LexicalIndex

    lexical = LexicalIndex.build(store.term_matrix())
    out = []
    for s in seeds[:100]:
        top = [c for c, _ in lexical.top_k(list(s), 40)]
        if not top:
            continue
        candidates = expand(_StoreOnly(store), top, hops=2, cap=200)
        t0 = time.perf_counter()
        store.chunk_ppr({c: 1.0 for c in top[:10]}, candidates, cfg)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    from app.eval.harness import Dataset, ensure_index, eval_settings
    from app.eval.metrics import percentile
    from app.services import open_store
    from app.settings import Settings
    from ingest.report import NoProgress
    from ingest.tokens import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    dataset = Dataset.load(args.dataset)
    base = Settings()
    analyzer = Analyzer(base.ingest.tokens)
    report: dict[str, object] = {"dataset": dataset.name, "questions": len(dataset.questions)}
    for backend in ("embedded", "neo4j"):
        settings = eval_settings(base.model_copy(update={"backend": backend}), dataset)
        ensure_index(settings, dataset, NoProgress())
        with open_store(settings) as store:
            vocab = set(store.term_matrix().vocabulary)
            seeds = [
                {t: 1.0 for t in analyzer.tokens(q["question"]) if t in vocab}
                for q in dataset.questions
            ]
            seeds = [s for s in seeds if s]
            cfg, gamma = settings.algorithms, settings.retrieval.tigrag.gamma
            extra: dict[str, float] = {}
            if backend == "neo4j":
                gds = store.gds  # type: ignore[attr-defined]
                gds.drop_all()
                t0 = time.perf_counter()
                gds.projection("tokens", min_weight=cfg.token_min_weight)
                extra["projection_seconds"] = round(time.perf_counter() - t0, 3)
            else:
                t0 = time.perf_counter()
                store.token_ppr(seeds[0], cfg, gamma)  # builds the in-memory operator
                extra["operator_build_seconds"] = round(time.perf_counter() - t0, 3)
            latencies = []
            for _ in range(args.repeat):
                for s in seeds:
                    t0 = time.perf_counter()
                    store.token_ppr(s, cfg, gamma)
                    latencies.append((time.perf_counter() - t0) * 1000)
            subgraph = candidate_ppr_latencies(store, seeds, cfg)
            status = store.status()
        report[backend] = {
            "queries": len(latencies),
            "tokens": status.tokens,
            "co_occurs": status.edges["CO_OCCURS"],
            "latency_ms_p50": round(percentile(latencies, 50), 2),
            "latency_ms_p95": round(percentile(latencies, 95), 2),
            "throughput_qps": round(1000 * len(latencies) / sum(latencies), 1),
            "candidate_ppr_ms_p50": round(percentile(subgraph, 50), 2),
            "candidate_ppr_ms_p95": round(percentile(subgraph, 95), 2),
            **extra,
        }
        print(f"[ppr] {backend}: {report[backend]}", file=sys.stderr)
    report["command"] = " ".join(["python", "-m", "bench", "ppr", *sys.argv[1:]])
    emit(report, args.out)


if __name__ == "__main__":
    main()
