"""The results page's documentation-corpus comparison: the default mode against each
baseline on every docs set, half by half (issue 43: the default must be at or above hybrid
and dense at the ranks users look at first). Halves are positions in questions.jsonl
(even, odd), computed from each run's per-question rows; postgres-docs' halves are runs
of their own, its development half and, once it has been run, its held-out half."""

from __future__ import annotations

from statistics import mean
from typing import Any

from bench.figures import Figures, grid, provenance, rounded, wrap
from bench.suites.docs import HALVED, eval_run
from bench.suites.recall import DOCS, OUT

MODES = ("default", "dense", "bm25", "hybrid")
METRICS = (("recall@1", "R@1"), ("recall@2", "R@2"), ("recall@5", "R@5"), ("mrr", "MRR"))


def _files() -> list[tuple[str, str, str]]:
    """(set, label of the half its file holds, file stem): the embedded runs the docs
    suite writes, a halved set's development half and held-out half each its own."""
    files = [(ds, "", eval_run(ds, "embedded", OUT, False).out.stem) for ds in DOCS]
    for ds, halves in HALVED.items():
        for held_out in (False, True):
            which = "held out" if held_out else "development"
            label = f"{which} ({halves['held-out' if held_out else 'dev']} positions)"
            files.append((ds, label, eval_run(ds, "embedded", OUT, held_out).out.stem))
    return files


def half_scores(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """R@1/2/5 and answer@5 in percent and MRR over one half's per-question rows."""
    scores: dict[str, float | None] = {
        key: 100 * mean(r[key] for r in rows) for key, _ in METRICS if key != "mrr"
    }
    scores["mrr"] = mean(1 / r["first_gold_rank"] if r["first_gold_rank"] else 0 for r in rows)
    answered = [r["answer@5"] for r in rows if "answer@5" in r]
    scores["answer@5"] = 100 * mean(answered) if answered else None
    return scores


def _halves(report: dict[str, Any]) -> list[tuple[str, dict[str, list[dict]]]] | None:
    """(label, per-mode rows) for each half this file holds; None for a run made without
    `--per-question`, which cannot be split."""
    per_mode = {m: report["results"].get(m, {}).get("per_question") for m in MODES}
    if any(rows is None for rows in per_mode.values()):
        return None
    if report.get("half") is not None:
        return [("", per_mode)]
    return [
        (label, {m: rows[start::2] for m, rows in per_mode.items()})
        for label, start in (("even positions", 0), ("odd positions", 1))
    ]


def _row(label: str, half: str, per_mode: dict[str, list[dict]]) -> list[str]:
    scores = {m: half_scores(rows) for m, rows in per_mode.items()}
    keys = [k for k, _ in METRICS] + ["answer@5"]
    below = [
        f"{heading} < {m}"
        for k, heading in [*METRICS, ("answer@5", "ans@5")]
        for m in ("dense", "hybrid")
        if scores["default"][k] is not None and scores["default"][k] < scores[m][k] - 1e-9
    ]
    cells = [label, half, str(len(per_mode["default"]))]
    for m in MODES:
        cells.append(" / ".join(rounded(scores[m][k], key=k) for k in keys))
    return [*cells, ", ".join(below) or "none"]


def docs_halves(figures: Figures) -> str:
    """One row per set and half: each mode's R@1 / R@2 / R@5 / MRR / ans@5, and where the
    default is below dense or hybrid."""
    header = ["set", "half", "questions", *MODES, "default below"]
    rows, sources = [], []
    for ds, label, name in _files():
        report = figures.get(name) if figures.has(name) else None
        halves = _halves(report) if report else None
        if halves is None:
            missing = "not run" if report is None else "no per-question rows"
            rows.append([ds, label, "–", *[missing] * len(MODES), "–"])
        for half, per_mode in halves or []:
            rows.append(_row(ds, half or label, per_mode))
        if report is not None:
            sources.append(provenance(name, report))
    intro = wrap(
        "Each cell is R@1 / R@2 / R@5 / MRR / answer@5 (page recall in percent, MRR of the "
        "first gold page, answer string in the first five chunks), embedded backend; the last "
        "column names each metric on which the default is below dense or hybrid. sqlite-docs "
        "and git-docs were used to choose the defaults, both halves alike; postgres-docs was "
        "not, and its held-out half runs once (`python -m bench docs postgres-docs "
        "--held-out`)."
    )
    return "\n\n".join([intro, grid(header, rows), "\n".join(f"- {s}" for s in sources)])


REPLAY = "fusion-replay-embedded"
REPLAY_METRICS = (("recall@2", "R@2"), ("recall@5", "R@5"), ("answer@5", "ans@5"))


def fusion_replay(figures: Figures) -> str:
    """One row per fusion variant: R@2 / R@5 / ans@5 on each set and half, and how many
    (set, half, metric) cells it leaves below dense or hybrid, out of all it is scored on."""
    if not figures.has(REPLAY):
        return "Not run yet: `python -m bench docs --fusion-replay`."
    report = figures.get(REPLAY)
    cells = [
        (ds, half, cell) for ds, halves in report["sets"].items() for half, cell in halves.items()
    ]
    header = ["variant", *[f"{ds} · {half}" for ds, half, _ in cells], "cells below"]
    rows = []
    counts: dict[str, int] = {}
    for variant in report["variants"]:
        row = [variant]
        below = 0
        for _, _, cell in cells:
            got = cell["variants"][variant]
            row.append(" / ".join(rounded(got["scores"][k], key=k) for k, _ in REPLAY_METRICS))
            below += len(got["below"])
        rows.append([*row, str(below)])
        counts[variant] = below
    scored = sum(len(cell["baselines"]["dense"]) for _, _, cell in cells) * 2
    intro = wrap(
        "The default mode's own fusion code replayed over each question's stored part "
        "rankings (tigrag, bridge, hybrid), once per setting; the shipped settings' replay "
        "equals the live ranking on every question, or the suite stops. Each cell is R@2 / "
        "R@5 / answer@5; `cells below` counts the (set, half, metric) cells, of the "
        f"{scored} scored (five metrics against dense and against hybrid), where the variant "
        "is below a baseline. postgres-docs is replayed on its development half only."
    )
    fewest = min(counts.values())
    best = ", ".join(v for v, n in counts.items() if n == fewest)
    verdict = f"Fewest cells below a baseline ({fewest}): {best}."
    return "\n\n".join([intro, grid(header, rows), verdict, f"- {provenance(REPLAY, report)}"])
