"""Markdown tables for the README from `neorag eval --json` files.

python bench/results_table.py bench/out/eval-*.json
"""

from __future__ import annotations

import json
import sys
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
    value = row.get(key)
    if value is None:
        return "–"
    return f"{value:.3f}" if key == "mrr" else f"{value:.1f}"


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


def main() -> None:
    for path in sorted(Path(p) for p in sys.argv[1:]):
        print(table(json.loads(path.read_text())))
        print()


if __name__ == "__main__":
    main()
