"""Embedding throughput per text source of the scale benchmark, and what embedding the
benchmark's sizes costs on this machine.

    python bench/embed_rate.py --sample 400 --out bench/out/embed-rate.json

Per source (2wiki-dev's passages, then each Debian documentation package the scale
benchmark draws distractors from) an evenly spaced sample of pages is chunked as the ingest
chunks them and `--sample` of their chunks are embedded once (after a warm-up), with the
ingest's model and batch size. The cost of a size is then Σ over its sources of chunks /
rate: the scale benchmark's sizes take their distractor pages in a fixed order
(bench/scale_corpus.py), so which packages, and how many of their chunks, a size holds is
known without chunking it. Encoding cost grows with a chunk's length in word pieces (capped
at the model's 256), which is why the sources differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import scale_corpus  # noqa: E402
from json_out import emit  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "2wiki-dev"
SIZES = (10_000, 50_000, 200_000)


def _chunks(paths: list[Path], cfg, count, want: int) -> list[str]:
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan
    from ingest.runner import embedding_text

    texts: list[str] = []
    for path in paths:
        for d in scan(path, cfg.max_file_bytes):
            if isinstance(d, LoadedDocument):
                texts += [
                    embedding_text(d.title, p.section_path, p.text)
                    for p in chunk_document(d, cfg.chunking, count)
                ]
        if len(texts) >= 4 * want:
            break
    step = max(1, len(texts) // want)
    return texts[::step][:want]


def main() -> None:
    from app.settings import Settings
    from ingest.models import IngestModels

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=400)
    parser.add_argument("--cache", type=Path, default=scale_corpus.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cfg = Settings().ingest
    models = IngestModels(cfg.models)
    models.embedder.encode(["warm up"] * 8)
    model = models.embedder._model  # the SentenceTransformer: its tokenizer and length cap
    tokenizer, limit = model.tokenizer, model.max_seq_length
    all_pages = scale_corpus.pages(args.cache)
    sources: dict[str, list[Path]] = {"2wiki-dev": [DATASET / "corpus.jsonl"]}
    for package in scale_corpus.PACKAGES:
        mine = [Path(p.path) for p in all_pages if p.package == package]
        stride = max(1, len(mine) // 60)
        sources[package] = mine[::stride]
    rates: dict[str, dict[str, float]] = {}
    for name, paths in sources.items():
        texts = _chunks(paths, cfg, models.count_tokens, args.sample)
        pieces = [min(len(tokenizer(t)["input_ids"]), limit) for t in texts]
        t0 = time.perf_counter()
        models.embedder.encode(texts)
        seconds = time.perf_counter() - t0
        rates[name] = {
            "chunks": len(texts),
            "mean_word_pieces": round(sum(pieces) / len(pieces), 1),
            "chunks_per_second": round(len(texts) / seconds, 2),
        }
        print(name, rates[name], flush=True)
    base_chunks = 7_526  # 2wiki-dev's chunks (`neorag status` after indexing it)
    projected = []
    for size in SIZES:
        chosen = scale_corpus.select(all_pages, max(size - base_chunks, 0))
        held = {p: sum(x.chunks for x in chosen if x.package == p) for p in scale_corpus.PACKAGES}
        seconds = base_chunks / rates["2wiki-dev"]["chunks_per_second"] + sum(
            n / rates[p]["chunks_per_second"] for p, n in held.items() if n
        )
        projected.append(
            {
                "target_chunks": size,
                "distractor_chunks": held,
                "embed_hours": round(seconds / 3600, 2),
            }
        )
    report = {
        "model": cfg.models.embedding_model,
        "batch_size": cfg.models.embedding_batch_size,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "rates": rates,
        "projected": projected,
        "command": " ".join(["python", "bench/embed_rate.py", *sys.argv[1:]]),
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
