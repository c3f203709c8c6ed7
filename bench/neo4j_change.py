"""Stage times of a one-document change to a collection the scale benchmark left.

    NEO4J_URI=... NEO4J_PASSWORD=... python bench/neo4j_change.py \
        --collection bench-scale-10000 --folder .neorag/bench-scale/corpora/size-10000

Appends a sentence to the first 2wiki passage of FOLDER (where it was ingested: document ids
hold the source path), re-ingests, puts the file back byte for byte and re-ingests again;
prints both runs' wall seconds and per-stage seconds as JSON (`--out` writes them too).
The collection must be the one FOLDER was ingested into (`bench/scale_bench.py` leaves it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def main() -> None:
    from scale_bench import edit_one_passage

    from app.services import index_dir, open_store
    from app.settings import Settings
    from ingest.models import IngestModels
    from ingest.runner import run_ingest

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="neo4j", choices=["embedded", "neo4j"])
    parser.add_argument("--collection", required=True)
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=REPO / ".neorag" / "bench-scale")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = Settings(backend=args.backend, data_dir=args.data_dir, collection=args.collection)
    models = IngestModels(settings.ingest.models)
    models.embedder.encode(["warm up"])
    corpus = args.folder / "2wiki" / "corpus.jsonl"
    runs = {}
    with open_store(settings) as store:

        def ingest() -> dict[str, object]:
            t0 = time.perf_counter()
            report = run_ingest(
                args.folder, store, settings.ingest, settings.algorithms, index_dir(settings),
                models=models,
            )  # fmt: skip
            return {"seconds": round(time.perf_counter() - t0, 2), "stages": report.seconds}

        ingest()  # settle: a no-op unless a derived stage is stale
        original = edit_one_passage(corpus)
        try:
            runs["change"] = ingest()
        finally:
            edit_one_passage(corpus, restore=original)
        runs["restore"] = ingest()
    result = {"backend": args.backend, "collection": args.collection, **runs}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
