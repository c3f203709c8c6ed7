"""Markdown tables for the README from `neorag eval --json` files.

python bench/results_table.py bench/out/eval-*.json
python bench/results_table.py --held-out bench/out/answer-DATASET-embedded.json …

`--held-out` splits an answer run over all questions into its first 100 (next to it,
`…-first100.json`) and the rest: each metric of the last n is (N·all − 100·first) / n.
"""

from __future__ import annotations

import json
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

COLUMNS = [
    ("recall@2", "R@2"),
    ("recall@5", "R@5"),
    ("recall@10", "R@10"),
    ("mrr", "MRR"),
    ("answer@5", "answer@5"),
    ("context_tokens_mean", "context tokens"),
    ("latency_ms_p50", "p50 ms"),
    ("latency_ms_p95", "p95 ms"),
]
ANSWER_COLUMNS = [
    ("em", "EM"),
    ("f1", "F1"),
    ("answer_hit", "answer_hit"),
    ("answer_ms_p50", "answer p50 ms"),
]


def _cell(row: dict, key: str) -> str:
    """Rounded half up, as the README's prose quotes the same figures (95.25 → 95.3)."""
    value = row.get(key)
    if value is None:
        return "–"
    places = Decimal("0.001") if key == "mrr" else Decimal("0.1")
    return str(Decimal(str(value)).quantize(places, rounding=ROUND_HALF_UP))


def table(report: dict) -> str:
    head = (
        f"**{report['dataset']}**, {report['backend']} backend, {report['questions']} questions, "
        f"indexed in {report['index_seconds']:.0f} s"
    )
    answered = any(row.get("em") is not None for row in report["results"].values())
    columns = COLUMNS + (ANSWER_COLUMNS if answered else [])
    lines = [head, "", "| mode | " + " | ".join(h for _, h in columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for mode, row in report["results"].items():
        cells = [_cell(row, k) for k, _ in columns]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def held_out(paths: list[Path]) -> str:
    keys = [k for k, _ in ANSWER_COLUMNS[:3]]
    lines = ["| dataset | questions | " + " | ".join(h for _, h in ANSWER_COLUMNS[:3]) + " |"]
    lines.append("|---|---|" + "---:|" * len(keys))
    for path in paths:
        everything = json.loads(path.read_text())
        first = json.loads(path.with_name(path.stem + "-first100.json").read_text())
        n_all, n_first = everything["questions"], first["questions"]
        rest = n_all - n_first
        for mode, row in everything["results"].items():
            head = first["results"][mode]
            tail = {k: (n_all * row[k] - n_first * head[k]) / rest for k in keys}
            for label, values in (
                (f"first {n_first} (fitted)", head),
                (f"last {rest} (held out)", tail),
            ):
                cells = " | ".join(f"{values[k]:.1f}" for k in keys)
                lines.append(f"| {everything['dataset']} | {label} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--held-out":
        print(held_out([Path(p) for p in args[1:]]))
        return
    for path in sorted(Path(p) for p in args):
        print(table(json.loads(path.read_text())))
        print()


if __name__ == "__main__":
    main()
