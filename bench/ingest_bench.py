"""Ingest benchmark: full ingest of a dataset on each backend, timed per stage, reported as a
ratio to the embedding-only time measured in the same process (these machines are noisy;
ratios against a same-run baseline are what we compare).

    python bench/ingest_bench.py ../shared/datasets/2wiki-dev --backends embedded,neo4j \
        --out bench/out/ingest-2wiki.json

Each backend runs in its own child process (so peak memory is that backend's): it loads the
models, embeds every chunk once (the embedding-only baseline: same chunker, model and batch
size), then runs the real ingest into an empty store. The Neo4j backend uses NEO4J_URI /
NEO4J_PASSWORD (`make bench` starts a server and sets them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def worker(dataset: Path, backend: str, data_dir: Path) -> dict[str, object]:
    from app.services import index_dir, open_store
    from app.settings import Settings
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan
    from ingest.models import IngestModels
    from ingest.runner import embedding_text, run_ingest

    settings = Settings(backend=backend, data_dir=data_dir)
    models = IngestModels(settings.ingest.models)
    models.embedder.encode(["warm up"])
    models.extractor.analyze(["Warm up in Paris."], ["warm"])
    corpus = dataset / "corpus.jsonl"
    docs = [
        d for d in scan(corpus, settings.ingest.max_file_bytes) if isinstance(d, LoadedDocument)
    ]
    texts = [
        embedding_text(d.title, p.section_path, p.text)
        for d in docs
        for p in chunk_document(d, settings.ingest.chunking, models.count_tokens)
    ]
    t0 = time.perf_counter()
    models.embedder.encode(texts)
    embedding_only = time.perf_counter() - t0

    with open_store(settings) as store:
        store.clear()
        t0 = time.perf_counter()
        report = run_ingest(
            corpus, store, settings.ingest, settings.algorithms, index_dir(settings), models=models
        )
        total = time.perf_counter() - t0
        status = store.status().as_dict()
    return {
        "backend": backend,
        "documents": len(docs),
        "chunks": len(texts),
        "embedding_only_seconds": round(embedding_only, 2),
        "ingest_seconds": round(total, 2),
        "ratio": round(total / embedding_only, 3),
        "stage_seconds": report.seconds,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "status": status,
        "modularity": report.modularity,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--backends", default="embedded,neo4j")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.dataset.resolve(), args.worker, args.data_dir)))
        return
    results = []
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        with tempfile.TemporaryDirectory(prefix=f"neorag-bench-{backend}-") as tmp:
            print(f"[bench] {backend}: ingesting {args.dataset} ...", file=sys.stderr)
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    str(args.dataset),
                    "--worker",
                    backend,
                    "--data-dir",
                    tmp,
                ],
                capture_output=True,
                text=True,
                env=dict(os.environ),
                check=False,
            )
            if out.returncode != 0:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"[bench] {backend} failed")
            result = json.loads(out.stdout.strip().splitlines()[-1])
            results.append(result)
            print(
                f"[bench] {backend}: ingest {result['ingest_seconds']}s, embedding-only "
                f"{result['embedding_only_seconds']}s, ratio {result['ratio']}, "
                f"peak RSS {result['peak_rss_mb']} MB",
                file=sys.stderr,
            )
    report = {
        "dataset": args.dataset.name,
        "machine": f"{os.cpu_count()} cores",
        "command": " ".join(["python", "bench/ingest_bench.py", *sys.argv[1:]]),
        "results": results,
    }
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
