"""Time of each ingest stage for one-document changes to an already-ingested corpus.jsonl,
run with the code of a given checkout (so the same store can be timed before and after a
change to the code).

    python bench/one_doc_change.py .neorag/bench2wiki/data-pristine .neorag/bench2wiki/docs \
        --code /tmp/neorag-before --edits 2 --out bench/out/one-doc-change-before.json

DATA_DIR is copied to a scratch directory first (the original is never written) and
`neorag ingest` runs as a child process (`python -m app.cli` with PYTHONPATH=CODE, embedded
backend): once unedited (brings derived files to that code's format; its stage times are
reported as `settle`), then once per edit, each edit appending a sentence to one more
passage. Document ids hold the corpus file's path (ingest/identity.py), so DOCS is edited
in place, where it was ingested, and its corpus.jsonl is put back byte for byte afterwards,
also when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def ingest(code: Path, data_dir: Path, docs: Path) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(code), NEORAG_BACKEND="embedded")
    env["NEORAG_DATA_DIR"] = str(data_dir.resolve())
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "ingest", str(docs.resolve()), "--json"],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"ingest failed ({out.returncode}): {out.stderr[-2000:]}")
    report = json.loads(out.stdout)
    return {
        "changed": report["changed"],
        "indexes": report.get("indexes"),
        "seconds": report["seconds"],
        "derived_seconds": round(
            sum(
                v
                for k, v in report["seconds"].items()
                if k.startswith(("edges", "analytics", "indexes"))
            ),
            3,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("docs", type=Path, help="a folder holding the ingested corpus.jsonl")
    parser.add_argument("--code", type=Path, required=True, help="checkout whose code runs")
    parser.add_argument("--edits", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    docs = args.docs
    corpus = docs / "corpus.jsonl"
    original = corpus.read_bytes()
    with tempfile.TemporaryDirectory(dir=args.data_dir.parent) as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(args.data_dir, data)
        try:
            rows: dict[str, object] = {
                "code": str(args.code),
                "settle": ingest(args.code, data, docs),
            }
            edits = []
            for i in range(args.edits):
                lines = corpus.read_text(encoding="utf-8").splitlines()
                passage = json.loads(lines[100 + 37 * i])
                passage["text"] += f" This sentence was added by edit {i}."
                lines[100 + 37 * i] = json.dumps(passage, ensure_ascii=False)
                corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
                edits.append(ingest(args.code, data, docs))
                print(json.dumps(edits[-1]), flush=True)
            rows["edits"] = edits
        finally:
            corpus.write_bytes(original)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
