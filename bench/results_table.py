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
    ("context_tokens_mean", "context tokens"),
    ("latency_ms_p50", "p50 ms"),
    ("latency_ms_p95", "p95 ms"),
]


def table(report: dict) -> str:
    head = (
        f"**{report['dataset']}**, {report['backend']} backend, {report['questions']} questions, "
        f"indexed in {report['index_seconds']:.0f} s"
    )
    lines = [head, "", "| mode | " + " | ".join(h for _, h in COLUMNS) + " |"]
    lines.append("|---|" + "---:|" * len(COLUMNS))
    for mode, row in report["results"].items():
        cells = [f"{row[k]:.1f}" if k != "mrr" else f"{row[k]:.3f}" for k, _ in COLUMNS]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    for path in sorted(Path(p) for p in sys.argv[1:]):
        print(table(json.loads(path.read_text())))
        print()


if __name__ == "__main__":
    main()
