"""How the ingest's per-batch analysis (tokens, NER, cloze questions) should share the cores
with the embedding model, timed on the same chunks in one process.

    python bench/ner_overlap_bench.py .neorag/bench-scale/corpora/size-50000 --chunks 1500 \
        --out bench/out/ner-overlap-50k.json

Arrangements, each on the same evenly spaced sample of the folder's chunks, in alternating
order over `--reps` rounds:
- `serial`: embed with every thread, then analyse;
- `overlap`: analyse in a thread while torch embeds with every thread, as
  `ingest.runner.build_chunks` does.
`embed` and `analyse` alone are the parts. Wall and CPU seconds per arrangement; the figure
that matters is each arrangement's wall time over `embed` alone, as the scale benchmark's
ingest / embedding-only ratio is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from json_out import current_commit, emit  # noqa: E402


def sample_chunks(folder: Path, want: int, every: int, settings, models) -> list[tuple]:
    """(chunk record, embedding text) of `want` chunks evenly spaced over the folder's
    documents (every `every`-th document is chunked, then chunks are taken evenly)."""
    from graph.types import ChunkRecord
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan
    from ingest.runner import embedding_text

    docs = [
        d for d in scan(folder, settings.ingest.max_file_bytes) if isinstance(d, LoadedDocument)
    ]
    out = [
        (
            ChunkRecord(
                id=f"{d.source}#{p.ordinal}",
                doc_id=str(d.source),
                ordinal=p.ordinal,
                title=d.title,
                text=p.text,
                section_path=tuple(p.section_path),
                n_tokens=p.n_tokens,
            ),
            embedding_text(d.title, p.section_path, p.text),
        )
        for d in docs[::every]
        for p in chunk_document(d, settings.ingest.chunking, models.count_tokens)
    ]
    step = max(1, len(out) // want)
    return out[::step][:want]


def main() -> None:
    from app.settings import Settings
    from ingest.models import IngestModels
    from ingest.runner import analyse_chunks
    from ingest.tokens import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--chunks", type=int, default=1500)
    parser.add_argument("--every", type=int, default=10, help="chunk every n-th document")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    settings = Settings()
    models = IngestModels(settings.ingest.models, settings.ingest.device)
    analyzer = Analyzer(settings.ingest.tokens)
    chunks = sample_chunks(args.folder, args.chunks, args.every, settings, models)
    records, texts = (list(x) for x in zip(*chunks, strict=True))
    models.embedder.encode(texts[:64])
    analyse_chunks(records[:32], analyzer, models)
    pool = ThreadPoolExecutor(max_workers=1)

    def embed() -> None:
        models.embedder.encode(texts)

    def analyse() -> None:
        analyse_chunks(records, analyzer, models)

    def serial() -> None:
        embed()
        analyse()

    def overlap() -> None:
        ner = pool.submit(analyse)
        embed()
        ner.result()

    arrangements = {
        "embed": embed,
        "analyse": analyse,
        "serial": serial,
        "overlap": overlap,
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in arrangements}
    names = list(arrangements)
    for rep in range(args.reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            w0, c0 = time.perf_counter(), time.process_time()
            arrangements[name]()
            took = (time.perf_counter() - w0, time.process_time() - c0)
            times[name].append(took)
            print(f"[bench] {name}: {took[0]:.1f} s wall, {took[1]:.1f} s CPU", file=sys.stderr)
    median = {
        name: {
            "wall": round(statistics.median(t[0] for t in runs), 2),
            "cpu": round(statistics.median(t[1] for t in runs), 2),
        }
        for name, runs in times.items()
    }
    embed_wall = median["embed"]["wall"]
    emit(
        {
            "command": " ".join(["python bench/ner_overlap_bench.py", *sys.argv[1:]]),
            "commit": current_commit(),
            "chunks": len(texts),
            "folder": args.folder.name,
            "median": median,
            "over_embed_wall": {n: round(m["wall"] / embed_wall, 3) for n, m in median.items()},
            "runs": {n: [[round(w, 2), round(c, 2)] for w, c in r] for n, r in times.items()},
        },
        args.out,
    )


if __name__ == "__main__":
    main()
