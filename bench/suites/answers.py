"""Answers suite: the offline reader's short answers (EM, F1, answer_hit), default mode,
embedded backend, over the recall suite's evaluation indexes.

    python -m bench answers                   # the five sets, and the held-out first 100s
    python -m bench answers musique-200 --no-held-out

Writes bench/out/answer-DATASET-embedded.json; with the held-out runs (on by default, for
the two sets whose first 100 questions the span weights were fitted on) also
answer-DATASET-embedded-first100.json, from which docs/results.md computes the last 100.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.suites.recall import DOCS, OUT, SHARED, Run, run_all

FITTED_ON_FIRST_100 = ("musique-200", "hotpotqa-200")


def plan(datasets: list[str], held_out: bool, out: Path = OUT) -> list[Run]:
    answer = ["--answer", "offline"]
    runs = [
        Run(ds, "embedded", "default", out / f"answer-{Path(ds).name}-embedded.json", args=answer)
        for ds in datasets
    ]
    if held_out:
        runs += [
            Run(
                ds,
                "embedded",
                "default",
                out / f"answer-{ds}-embedded-first100.json",
                args=[*answer, "--limit", "100"],
            )
            for ds in datasets
            if ds in FITTED_ON_FIRST_100
        ]
    return runs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("datasets", nargs="*", help="names or folders (default: the five sets)")
    p.add_argument("--no-held-out", action="store_true", help="skip the first-100 runs")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the JSON (bench/out)")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = p.parse_args()
    runs = plan(args.datasets or [*SHARED, *DOCS], not args.no_held_out, args.out)
    return run_all(runs, args.dry_run)
