"""The pieces docs/results.md is rendered with: bench/out's JSON read once per file, figures
rounded as the prose quotes them, a table's provenance line, Markdown tables."""

from __future__ import annotations

import json
import re
import textwrap
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
PUBLISHED = REPO / "bench" / "published.json"


def rounded(value: Any, places: int | None = None, key: str = "") -> str:
    """Half up, as the prose always quoted the figures (95.25 → 95.3); MRR to 3 places,
    other floats to 1, integers whole with thousands separators."""
    if value is None:
        return "–"
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, int) and places is None:
        return f"{value:,}"
    if places is None:
        places = 3 if key == "mrr" else 1
    step = Decimal(1).scaleb(-places)
    text = str(Decimal(str(value)).quantize(step, rounding=ROUND_HALF_UP))
    whole, _, fraction = text.partition(".")
    sign = "-" if whole.startswith("-") else ""
    whole = f"{int(whole.lstrip('-')):,}"
    return sign + whole + ("." + fraction if fraction else "")


class Figures:
    """The JSON of one bench/out folder, read once per file."""

    def __init__(self, out: Path = OUT) -> None:
        self.out = out
        self._read: dict[str, dict[str, Any]] = {}

    def get(self, name: str) -> dict[str, Any]:
        if name not in self._read:
            path = self.out / f"{name}.json"
            if not path.is_file():
                raise KeyError(f"bench/out/{name}.json does not exist")
            self._read[name] = json.loads(path.read_text())
        return self._read[name]

    def has(self, name: str) -> bool:
        return (self.out / f"{name}.json").is_file()

    def value(self, ref: str) -> str:
        """`FILE:a/b/0/c|N`: one value, rounded (`|pct`: a share shown in percent)."""
        ref, _, fmt = ref.partition("|")
        name, _, path = ref.partition(":")
        name = name.strip()
        node: Any
        if name == "published":  # bench/published.json: figures neorag does not measure
            node = json.loads(PUBLISHED.read_text())
        elif name.startswith("dataset/"):  # a bundled dataset's meta.json (its counts)
            node = json.loads((REPO / "bench" / "datasets" / name[8:] / "meta.json").read_text())
        else:
            node = self.get(name)
        for key in path.strip().split("/"):
            if isinstance(node, list):
                node = node[int(key)]
            elif key in node:
                node = node[key]
            else:
                raise KeyError(f"bench/out/{name}.json has no {path!r} (stopped at {key!r})")
        if fmt.startswith("pct"):
            return rounded(node * 100, int(fmt[3:] or 1))
        return rounded(node, int(fmt) if fmt else None, path.rsplit("/", 1)[-1])


def provenance(name: str, report: dict[str, Any], command: str | None = None) -> str:
    """The line under a table: its file, the command that wrote it, the commit and date."""
    command = report.get("command") or command or "command not recorded"
    commit = report.get("commit") or "commit not recorded"
    date = report.get("date") or "date not recorded"
    return f"Source `bench/out/{name}.json` · `{command}` · {commit} · {date}"


NUMBER = re.compile(r"^[-–*\d.,/ ]+$")


def grid(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: columns of figures right-aligned, others left."""
    numeric = [all(NUMBER.match(r[i]) for r in rows) for i in range(len(header))]
    rule = "|" + "|".join("---:" if n and i else "---" for i, n in enumerate(numeric)) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def wrap(text: str) -> str:
    """Prose the renderer writes, wrapped as the hand-written Markdown around it is."""
    return textwrap.fill(text, width=90, break_long_words=False, break_on_hyphens=False)


# ---- the sections ---------------------------------------------------------------------
