"""Docs suite: the bundled documentation corpora (bench/datasets/sqlite-docs, git-docs).
Each set is checked first (every answer string in a gold page as neorag's loader reads it,
meta.json's counts; bench/datasets/check_folder.py), then the recall suite runs on it
(every mode, page-level recall) and the answers suite.

    python -m bench docs                      # both sets, both backends
    python -m bench docs git-docs --backends embedded
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.suites import answers
from bench.suites.recall import DOCS, MODES, OUT, REPO, Run, locate, run_all


def check(names: list[str]) -> list[str]:
    """Every problem the dataset checker finds, prefixed by its set."""
    sys.path.insert(0, str(REPO / "bench" / "datasets"))
    from check_folder import check as check_folder

    return [f"{name}: {problem}" for name in names for problem in check_folder(locate(name))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("datasets", nargs="*", default=list(DOCS))
    p.add_argument("--backends", default="embedded,neo4j")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the JSON (bench/out)")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = p.parse_args()
    if problems := check(args.datasets):
        print("\n".join(problems), file=sys.stderr)
        return 1
    runs = [
        Run(ds, backend, MODES, args.out / f"eval-{ds}-{backend}.json")
        for backend in args.backends.split(",")
        for ds in args.datasets
    ]
    runs += answers.plan(args.datasets, held_out=False, out=args.out)
    return run_all(runs, args.dry_run)
