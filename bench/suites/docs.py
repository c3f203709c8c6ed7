"""Docs suite: the bundled documentation corpora (bench/datasets/sqlite-docs, git-docs,
postgres-docs). Each set is checked first (every answer string in a gold page as neorag's
loader reads it, meta.json's counts; bench/datasets/check_folder.py), then the recall suite
runs on it (every mode, page-level recall) and the answers suite.

A set written to be held out from tuning (postgres-docs) runs on its development half
only, into eval-SET-dev-BACKEND.json; `--held-out` runs the other half instead, into
eval-SET-held-out-BACKEND.json, once, when the settings are chosen.

    python -m bench docs                      # every set, both backends
    python -m bench docs git-docs --backends embedded
    python -m bench docs postgres-docs --held-out --backends embedded
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.suites import answers
from bench.suites.recall import DOCS, MODES, OUT, REPO, Run, locate, run_all

HALVED = {"postgres-docs": {"dev": "even", "held-out": "odd"}}
"""Sets split by position in questions.jsonl: which half is developed on, which held out."""


PER_QUESTION = ["--per-question"]
"""Every docs run keeps its per-question rows: the results page scores each half from them."""


def eval_run(ds: str, backend: str, out: Path, held_out: bool) -> Run:
    """The recall run of one set on one backend (its half, for a halved set)."""
    if ds not in HALVED:
        return Run(ds, backend, MODES, out / f"eval-{ds}-{backend}.json", args=PER_QUESTION)
    half = "held-out" if held_out else "dev"
    return Run(
        ds,
        backend,
        MODES,
        out / f"eval-{ds}-{half}-{backend}.json",
        args=["--half", HALVED[ds][half], *PER_QUESTION],
    )


def check(names: list[str]) -> list[str]:
    """Every problem the dataset checker finds, prefixed by its set."""
    sys.path.insert(0, str(REPO / "bench" / "datasets"))
    from check_folder import check as check_folder

    return [f"{name}: {problem}" for name in names for problem in check_folder(locate(name))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("datasets", nargs="*", default=[*DOCS, *HALVED])
    p.add_argument(
        "--held-out", action="store_true", help="a halved set's held-out half (run it once)"
    )
    p.add_argument("--backends", default="embedded,neo4j")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the JSON (bench/out)")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = p.parse_args()
    if problems := check(args.datasets):
        print("\n".join(problems), file=sys.stderr)
        return 1
    runs = [
        eval_run(ds, backend, args.out, args.held_out)
        for backend in args.backends.split(",")
        for ds in args.datasets
    ]
    runs += answers.plan([d for d in args.datasets if d not in HALVED], False, out=args.out)
    return run_all(runs, args.dry_run)
