"""The token PageRank as the corpus grows: time per run and agreement with the exact run, for
each send rule and tolerance, on the token graph of the scale benchmark's corpora.

    python bench/token_ppr_scale.py --sizes 10000,50000,200000 --out bench/out/token-ppr-scale.json

The corpora are the scale benchmark's (2wiki-dev's passages, then Debian's documentation
pages in their fixed order, `bench/scale_corpus.py`): every chunk is cut by neorag's own
loader and chunker and tokenised by its analyzer, and the CO_OCCURS weights are counted
exactly as ingest counts them (pairs at distance < w), kept at `token_min_weight` as
queries keep them. Only the token graph is built (no embeddings), so the 200k size takes
minutes, not hours. Seeds are the 2wiki-dev questions' tokens found in the graph (TIGRAG's
first round). For each size every variant runs the same seeds; its top-γ tokens are
compared with the exact run's (tolerance 1e-7, GDS's rule): the share of tokens in common
and the share of the exact top-γ weight they hold (TIGRAG weights BM25 terms by it). Every
size is measured in the same process, so the time ratios between sizes are like for like.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import cache
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import sparse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import scale_corpus  # noqa: E402
from json_out import emit  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "2wiki-dev"
GAMMA = 30
EXACT = ("delta", 1e-7, 10, "float64")  # (send rule, tolerance, max iterations, dtype)
VARIANTS = (
    ("delta", 1e-7, 10, "float32"),
    ("delta", 1e-6, 10, "float64"),
    ("delta", 1e-5, 10, "float64"),
    ("delta", 1e-7, 7, "float64"),
    ("delta", 1e-7, 5, "float64"),
    ("delta", 1e-7, 4, "float64"),
    ("delta", 1e-7, 5, "float32"),
    ("per_degree", 1e-9, 10, "float64"),
    ("per_degree", 1e-8, 10, "float64"),
    ("per_degree", 1e-7, 10, "float64"),
)
DTYPES = sorted({v[3] for v in (EXACT, *VARIANTS)})


@cache
def _chunking():  # built once per worker process
    from ingest.config import IngestConfig
    from ingest.models import IngestModels
    from ingest.tokens import Analyzer

    cfg = IngestConfig()
    return cfg, IngestModels(cfg.models).count_tokens, Analyzer(cfg.tokens)


def _chunk_tokens(path: str) -> list[list[str]]:
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan

    cfg, count_tokens, analyzer = _chunking()
    docs = [d for d in scan(Path(path), cfg.max_file_bytes) if isinstance(d, LoadedDocument)]
    return [
        analyzer.tokens(c.text) for d in docs for c in chunk_document(d, cfg.chunking, count_tokens)
    ]


class TokenGraph:
    """Pair counts accumulated chunk by chunk, as int64 keys over a growing vocabulary."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.index: dict[str, int] = {}
        self.keys: list[np.ndarray] = []
        self.chunks = 0

    def add(self, tokens: list[str]) -> None:
        self.chunks += 1
        ids = np.fromiter(
            (self.index.setdefault(t, len(self.index)) for t in tokens), np.int64, len(tokens)
        )
        for offset in range(1, min(self.window, len(ids))):
            a, b = ids[:-offset], ids[offset:]
            keep = a != b
            lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
            self.keys.append((lo << 32) | hi)

    def adjacency(self, min_weight: int) -> sparse.csr_matrix:
        keys, weights = np.unique(np.concatenate(self.keys), return_counts=True)
        self.keys = [np.repeat(keys, weights)]  # compacted; the counts stay exact
        keep = weights >= min_weight
        lo, hi, w = keys[keep] >> 32, keys[keep] & 0xFFFFFFFF, weights[keep].astype(np.float64)
        n = len(self.index)
        upper = sparse.coo_matrix((w, (lo, hi)), shape=(n, n))
        return (upper + upper.T).tocsr()


def corpus_paths(cache: Path) -> list[str]:
    return [
        str(p) for package in scale_corpus.PACKAGES for p in scale_corpus.page_paths(cache, package)
    ]


def measure(graph: TokenGraph, seeds_text: list[list[str]], min_weight: int) -> dict:
    from graph.algorithms.ppr import PprOperator
    from graph.config import AlgorithmConfig

    adjacency = graph.adjacency(min_weight)
    operators = {dtype: PprOperator(adjacency, dtype=np.dtype(dtype).type) for dtype in DTYPES}
    seeds = [{graph.index[t]: 1.0 for t in tokens if t in graph.index} for tokens in seeds_text]
    seeds = [s for s in seeds if s]
    base = AlgorithmConfig()

    def run(rule: str, tol: float, iterations: int, dtype: str) -> tuple[list, list[float]]:
        cfg = base.model_copy(
            update={"ppr_send_rule": rule, "ppr_tolerance": tol, "ppr_max_iterations": iterations}
        )
        op = operators[dtype]
        out, ms = [], []
        for s in seeds:
            t0 = time.perf_counter()
            out.append(op.run(s, cfg))
            ms.append((time.perf_counter() - t0) * 1000)
        return out, ms

    def top(scores: np.ndarray) -> np.ndarray:
        k = min(GAMMA, len(scores))
        return np.argpartition(-scores, k - 1)[:k]

    def row(variant: tuple, ms: list[float], overlap: float, weight: float) -> dict:
        rule, tol, iterations, dtype = variant
        return {
            "rule": rule,
            "tolerance": tol,
            "max_iterations": iterations,
            "dtype": dtype,
            **_times(ms),
            "overlap": round(overlap, 4),
            "weight": round(weight, 4),
        }

    exact, exact_ms = run(*EXACT)
    exact_top = [top(x) for x in exact]
    rows = [row(EXACT, exact_ms, 1.0, 1.0)]
    for variant in VARIANTS:
        got, ms = run(*variant)
        overlap, weight = [], []
        for ref, ref_top, x in zip(exact, exact_top, got, strict=True):
            common = np.intersect1d(ref_top, top(x))
            overlap.append(len(common) / len(ref_top))
            weight.append(float(ref[common].sum() / ref[ref_top].sum()))
        rows.append(row(variant, ms, float(np.mean(overlap)), float(np.mean(weight))))
    return {
        "chunks": graph.chunks,
        "tokens": adjacency.shape[0],
        "relationships": int(adjacency.nnz),
        "questions": len(seeds),
        "variants": rows,
    }


def _times(ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "mean_ms": round(float(np.mean(ms)), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,50000,200000")
    ap.add_argument("--cache", type=Path, default=scale_corpus.DEFAULT_CACHE)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from graph.config import AlgorithmConfig
    from ingest.config import IngestConfig
    from ingest.tokens import Analyzer

    sizes = sorted(int(s) for s in args.sizes.split(","))
    sources = scale_corpus.fetch(args.cache)
    cfg = IngestConfig()
    analyzer = Analyzer(cfg.tokens)
    min_weight = AlgorithmConfig().token_min_weight
    questions = [json.loads(line)["question"] for line in (DATASET / "questions.jsonl").open()]
    seeds_text = [list(dict.fromkeys(analyzer.tokens(q))) for q in questions]
    graph = TokenGraph(cfg.tokens.cooccurrence_window)
    results = []
    started = time.perf_counter()
    paths = [str(DATASET / "corpus.jsonl"), *corpus_paths(args.cache)]
    with Pool(args.workers) as pool:
        for chunks in pool.imap(_chunk_tokens, paths, chunksize=4):
            for tokens in chunks:
                graph.add(tokens)
            if graph.chunks >= sizes[0]:
                print(f"{graph.chunks} chunks in {time.perf_counter() - started:.0f} s", flush=True)
                results.append(measure(graph, seeds_text, min_weight))
                print(json.dumps(results[-1]), flush=True)
                sizes.pop(0)
                if not sizes:
                    pool.terminate()
                    break
    if sizes:
        raise SystemExit(f"the corpus holds {graph.chunks} chunks, fewer than {sizes[0]}")
    report = {
        "gamma": GAMMA,
        "min_weight": min_weight,
        "window": cfg.tokens.cooccurrence_window,
        "sources": sources,
        "sizes": results,
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
