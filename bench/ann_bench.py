"""Approximate dense search at scale: recall@10 against exact search and per-query latency
of the IVF-Flat index neorag uses above `approximate_above` (and FAISS HNSW for
comparison), plus the cost of building it and of a one-document update.

    python bench/ann_bench.py STORE_DATA_DIR ../shared/datasets/2wiki-dev \
        --size 200000 --out bench/out/ann-200k.json

STORE_DATA_DIR is an embedded-backend data directory whose collection (--collection) holds
the dataset's corpus (its real MiniLM chunk embeddings are the seed set). Embedding 200k
chunks of real text is about 70 CPU-minutes here, so the corpus is grown to `--size`
synthetically: each extra vector is a random point between two real chunk vectors (uniform
mixing weight) plus Gaussian noise with the real per-dimension spread, scaled so that the
median cosine to the nearest neighbour matches the real corpus's (both reported). Queries
are the dataset's real questions, encoded by the same model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import faiss
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graph.config import SearchIndexConfig  # noqa: E402 - after the path set-up
from graph.dense import DenseIndex  # noqa: E402


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def nn_cosine_median(x: np.ndarray, sample: int, rng: np.random.Generator) -> float:
    """Median over a sample of rows of the cosine to their nearest other row."""
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    rows = rng.choice(x.shape[0], size=min(sample, x.shape[0]), replace=False)
    scores, _ = index.search(x[rows], 2)
    return float(np.median(scores[:, 1]))


def synthesize(real: np.ndarray, size: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    extra = size - real.shape[0]
    a = real[rng.integers(0, real.shape[0], extra)]
    b = real[rng.integers(0, real.shape[0], extra)]
    w = rng.uniform(0.0, 1.0, (extra, 1)).astype(np.float32)
    spread = real.std(axis=0, keepdims=True)
    x = a + w * (b - a) + noise * spread * rng.normal(size=a.shape).astype(np.float32)
    return np.concatenate([real, unit(x)])


def calibrate_noise(real: np.ndarray, seed: int) -> tuple[float, float, float]:
    """The noise scale whose synthetic corpus (at the real corpus's size, so densities
    compare) has the real median nearest-neighbour cosine; bisection on [0, 3]."""
    rng = np.random.default_rng(seed)
    target = nn_cosine_median(real, 2_000, rng)
    lo, hi = 0.0, 3.0
    for _ in range(10):
        mid = (lo + hi) / 2
        fake = synthesize(real, 2 * real.shape[0], mid, seed)[real.shape[0] :]
        got = nn_cosine_median(fake, 2_000, rng)
        lo, hi = (mid, hi) if got > target else (lo, mid)
    mid = (lo + hi) / 2
    fake = synthesize(real, 2 * real.shape[0], mid, seed)[real.shape[0] :]
    return mid, target, nn_cosine_median(fake, 2_000, rng)


def latencies(search, queries: np.ndarray, repeat: int) -> tuple[float, float]:
    """p50 and p95 in ms of one-query searches (how retrieval calls the index)."""
    times = []
    for _ in range(repeat):
        for q in queries:
            t0 = time.perf_counter()
            search(q)
            times.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def emit(rows: list[dict], row: dict) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def recall(found: list[set[str]], truth: list[set[str]]) -> float:
    return float(np.mean([len(f & t) / len(t) for f, t in zip(found, truth, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--collection", default="default", help="the ingested collection")
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--nprobe", default="4,8,16,32,64")
    parser.add_argument("--nlist", default="0", help="comma list; 0 = the default (4·√n)")
    parser.add_argument("--hnsw", default="32", help="HNSW M values to compare ('' = none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)  # per-query latency, as a serving process sees it

    from app.services import store_path
    from app.settings import Settings
    from graph.embedded.store import EmbeddedStore
    from ingest.embed import shared_embedder

    settings = Settings(backend="embedded", data_dir=args.data_dir, collection=args.collection)
    with EmbeddedStore(store_path(settings), settings.collection) as store:
        vectors = store.chunk_vectors("embedding")
    real = unit(np.stack([vectors[c] for c in sorted(vectors)]))
    questions = [
        json.loads(line)["question"]
        for line in (args.dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    m = settings.ingest.models
    queries = unit(shared_embedder(m.embedding_model, m.embedding_batch_size).encode(questions))

    noise, real_nn, fake_nn = calibrate_noise(real, args.seed)
    corpus = synthesize(real, args.size, noise, args.seed)
    ids = [f"v{i:07d}" for i in range(corpus.shape[0])]
    print(
        f"{corpus.shape[0]} vectors ({real.shape[0]} real), noise {noise:.3f}: "
        f"median nn cosine real {real_nn:.3f}, synthetic {fake_nn:.3f}",
        flush=True,
    )

    t0 = time.perf_counter()
    exact = DenseIndex.build(ids, corpus, SearchIndexConfig(approximate_above=args.size))
    exact_build = time.perf_counter() - t0
    truth = [{c for c, _ in row} for row in exact.search_many(queries, 10)]
    exact_p50, exact_p95 = latencies(lambda q: exact.search(q, 10), queries, args.repeat)
    result: dict[str, object] = {
        "vectors": corpus.shape[0],
        "real_vectors": real.shape[0],
        "dim": corpus.shape[1],
        "queries": len(queries),
        "synthesis": {
            "noise": noise,
            "median_nn_cosine_real": real_nn,
            "median_nn_cosine_synthetic": fake_nn,
        },
        "exact": {"build_s": exact_build, "p50_ms": exact_p50, "p95_ms": exact_p95},
        "ivf": [],
        "hnsw": [],
    }
    print(f"exact: p50 {exact_p50:.2f} ms, p95 {exact_p95:.2f} ms", flush=True)

    for nlist in (int(x) for x in args.nlist.split(",")):
        config = SearchIndexConfig(approximate_above=0, ivf_nlist=nlist)
        t0 = time.perf_counter()
        ivf = DenseIndex.build(ids, corpus, config)
        build = time.perf_counter() - t0
        rng = np.random.default_rng(args.seed)
        doomed = [ids[i] for i in rng.choice(len(ids), 3, replace=False)]
        t0 = time.perf_counter()
        ivf.apply(doomed, ["new-0", "new-1", "new-2"], corpus[:3] + 0.01)
        update = time.perf_counter() - t0
        ivf.apply(["new-0", "new-1", "new-2"], doomed, exact.vectors(doomed))
        for nprobe in (int(x) for x in args.nprobe.split(",")):
            ivf.nprobe = nprobe
            found = [{c for c, _ in row} for row in ivf.search_many(queries, 10)]
            p50, p95 = latencies(lambda q, ivf=ivf: ivf.search(q, 10), queries, args.repeat)
            row = {
                "nlist": int(ivf._index.nlist),
                "nprobe": nprobe,
                "build_s": build,
                "one_doc_update_s": update,
                "recall@10": recall(found, truth),
                "p50_ms": p50,
                "p95_ms": p95,
            }
            emit(result["ivf"], row)

    for hnsw_m in (int(x) for x in args.hnsw.split(",") if x):
        index = faiss.IndexHNSWFlat(corpus.shape[1], hnsw_m, faiss.METRIC_INNER_PRODUCT)
        faiss.omp_set_num_threads(2)
        t0 = time.perf_counter()
        index.add(corpus)
        build = time.perf_counter() - t0
        faiss.omp_set_num_threads(1)
        for ef in (32, 64, 128):
            index.hnsw.efSearch = ef
            _, labels = index.search(queries, 10)
            found = [{ids[i] for i in row if i >= 0} for row in labels]

            def one(q: np.ndarray, index=index) -> None:
                index.search(q[None, :], 10)

            p50, p95 = latencies(one, queries, args.repeat)
            row = {
                "M": hnsw_m,
                "efSearch": ef,
                "build_s": build,
                "recall@10": recall(found, truth),
                "p50_ms": p50,
                "p95_ms": p95,
            }
            emit(result["hnsw"], row)

    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
