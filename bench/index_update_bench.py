"""Cost of the search-index stage as the corpus grows: a full build from the store (what
every change cost before segments; also timed with the pre-segment code when --before
points at a checkout of it) against a one-document update, the reader's load, a
compaction, and query latency.

    git archive 23d8a53 | tar -x -C /tmp/neorag-before     # the code before segments
    python bench/index_update_bench.py ../shared/datasets/2wiki-dev \
        --sizes 10000,50000,200000 --before /tmp/neorag-before --out bench/out/index-update.json

No models run: each size is a store (embedded, or with --backend neo4j the Neo4j that
NEO4J_URI / NEO4J_PASSWORD name, cleared first) of one-chunk documents whose text cycles
through the dataset's real passages (tokenised by the real analyzer) plus three rare
synthetic terms per chunk so the vocabulary grows with the corpus, with random 384-d
embeddings (search cost does not depend on their content). Queries are the dataset's
questions, tokenised by the analyzer (BM25) and random unit vectors (dense).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graph.config import SearchIndexConfig  # noqa: E402 - after the path set-up
from graph.embedded.store import EmbeddedStore  # noqa: E402
from graph.types import ChunkRecord, DocumentRecord, GraphDelta  # noqa: E402
from ingest.indexes import SearchIndexes  # noqa: E402
from ingest.tokens import Analyzer  # noqa: E402

DIM = 384
KEY = "bench"
COLLECTION = "bench-index-update"

# Run with the pre-segment code (PYTHONPATH=<old checkout>): time its full build and load.
_BEFORE = """
import sys, time
from pathlib import Path
from ingest.indexes import SearchIndexes
from ingest.tokens import Analyzer
if sys.argv[1] == "neo4j":
    from app.settings import Settings
    from graph.neo4j.store import Neo4jStore
    store = Neo4jStore(Settings().neo4j)
else:
    from graph.embedded.store import EmbeddedStore
    store = EmbeddedStore(Path(sys.argv[1]))
t0 = time.perf_counter(); SearchIndexes.build(store, Path(sys.argv[2]), "bench", Analyzer())
build = time.perf_counter() - t0
walls, cpus = [], []
for _ in range(3):
    t0, c0 = time.perf_counter(), time.process_time()
    assert SearchIndexes.load(Path(sys.argv[2]), "bench") is not None
    walls.append(time.perf_counter() - t0); cpus.append(time.process_time() - c0)
print(build, sorted(walls)[1], sorted(cpus)[1])
"""


def document(i: int, passages: list[dict], analyzer: Analyzer, rng: np.random.Generator, v: int):
    p = passages[i % len(passages)]
    rare = " ".join(f"syn{int(x)}" for x in rng.integers(0, 10 * (i + 1), 3))
    text = f"{p['title']}. {p['text']} {rare}"
    doc_id = f"doc{i:07d}"
    chunk = ChunkRecord(
        id=f"{doc_id}#0-v{v}",
        doc_id=doc_id,
        ordinal=0,
        title=p["title"],
        text=text,
        tokens=tuple(analyzer.tokens(text)),
        embedding=rng.normal(size=DIM).astype(np.float32),
        questions=(f"Who or what is {p['title']}?",),
    )
    return DocumentRecord(doc_id, f"/bench/{doc_id}", p["title"], f"h{i}-{v}"), [chunk]


def fill(store: EmbeddedStore, size: int, passages: list[dict], analyzer: Analyzer) -> None:
    rng = np.random.default_rng(size)
    for start in range(0, size, 2_000):
        batch = [
            document(i, passages, analyzer, rng, 0) for i in range(start, min(size, start + 2_000))
        ]
        store.apply(GraphDelta(add=batch))


def p50_ms(call, items) -> float:
    times = []
    for item in items:
        t0 = time.perf_counter()
        call(item)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def open_store(backend: str, db: Path):
    if backend == "neo4j":
        from app.settings import Settings
        from graph.neo4j.store import Neo4jStore

        store = Neo4jStore(Settings().neo4j, COLLECTION)
        store.clear()  # this collection only
        return store
    return EmbeddedStore(db)


def measure(
    size: int, passages, questions, analyzer, work: Path, before: Path | None, backend: str
) -> dict:
    db, directory = work / f"store-{size}.sqlite", work / f"idx-{size}"
    store = open_store(backend, db)
    t0 = time.perf_counter()
    fill(store, size, passages, analyzer)
    row: dict[str, object] = {
        "backend": backend,
        "chunks": size,
        "fill_store_s": time.perf_counter() - t0,
    }
    config = SearchIndexConfig()
    t0 = time.perf_counter()
    SearchIndexes.build(store, directory, KEY, analyzer, config)
    row["full_build_s"] = time.perf_counter() - t0
    row["base_mb"] = sum(p.stat().st_size for p in directory.glob("seg-*")) / 1e6
    if before is not None:
        env = dict(os.environ, PYTHONPATH=str(before))
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                _BEFORE,
                "neo4j" if backend == "neo4j" else str(db),
                str(work / f"before-{size}"),
            ],
            env=env,
            cwd=before,
            capture_output=True,
            text=True,
            check=True,
        )
        before_build, before_load, before_cpu = map(float, out.stdout.split())
        row["before_full_build_s"], row["before_load_s"] = before_build, before_load
        row["before_load_cpu_s"] = before_cpu

    rng = np.random.default_rng(1)
    updates, update_cpus, reads = [], [], []
    for v, i in enumerate(rng.choice(size, 5, replace=False).tolist(), start=1):
        doc, chunks = document(i, passages, analyzer, rng, v)
        store.apply(GraphDelta(remove_doc_ids=[doc.id], add=[(doc, chunks)]))
        t0 = time.perf_counter()
        documents = store.documents()  # the runner has read them already (fingerprint)
        reads.append(time.perf_counter() - t0)
        t0, c0 = time.perf_counter(), time.process_time()
        mode = SearchIndexes.update(store, directory, KEY, analyzer, config, documents)
        updates.append(time.perf_counter() - t0)
        update_cpus.append(time.process_time() - c0)
        assert mode == "delta", mode
    row["one_doc_update_s"] = statistics.median(updates)
    row["one_doc_update_cpu_s"] = statistics.median(update_cpus)
    row["documents_read_s"] = statistics.median(reads)
    walls, cpus = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        loaded = SearchIndexes.load(directory, KEY, config)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    row["load_s"], row["load_cpu_s"] = statistics.median(walls), statistics.median(cpus)
    assert loaded is not None and len(loaded.dense) == size
    squeeze = SearchIndexConfig(max_segments=1)
    doc, chunks = document(0, passages, analyzer, rng, 99)
    store.apply(GraphDelta(remove_doc_ids=[doc.id], add=[(doc, chunks)]))
    t0 = time.perf_counter()
    assert SearchIndexes.update(store, directory, KEY, analyzer, squeeze) == "compacted"
    row["compaction_s"] = time.perf_counter() - t0
    row["dense_kind"] = loaded.dense.kind
    tokens = [analyzer.tokens(q) for q in questions]
    row["bm25_top10_p50_ms"] = p50_ms(lambda q: loaded.lexical.top_k(q, 10), tokens)
    probes = rng.normal(size=(200, DIM)).astype(np.float32)
    row["dense_top10_p50_ms"] = p50_ms(lambda q: loaded.dense.search(q, 10), probes)
    if backend == "neo4j":
        store.clear()
    store.close()
    db.unlink(missing_ok=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--before", type=Path, help="a checkout of the pre-segment code")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    parser.add_argument("--backend", choices=["embedded", "neo4j"], default="embedded")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    passages = [
        json.loads(line)
        for line in (args.dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    questions = [
        json.loads(line)["question"]
        for line in (args.dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    analyzer = Analyzer()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(
                measure(size, passages, questions, analyzer, Path(tmp), args.before, args.backend)
            )
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"sizes": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
