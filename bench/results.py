"""`make results`: docs/results.md and README.md's headline table, rendered from bench/out.

python -m bench.results            # writes docs/results.md and the README block
python -m bench.results --check    # exit 1 when either differs from what the JSON renders
python -m bench.results --table bench/out/eval-*.json      # one Markdown table per file
python -m bench.results --held-out bench/out/answer-musique-200-embedded.json

Figures are never typed: docs/results.template.md holds the prose, and every number in it
is a placeholder the JSON fills. `{{section:NAME}}` is a rendered block (tables, each
naming its command, commit and date); `{{FILE:key/key/…}}` is one value of
bench/out/FILE.json (`|N` rounds to N places, `|pct` prints a share as a percentage,
`|pctN` with N places); `{{published:…}}` reads bench/published.json, the figures
neorag does not measure, and `{{dataset/NAME:…}}` a bundled dataset's meta.json.
tests/bench/test_results_page.py fails when the committed page differs from the render.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path

from bench.figures import OUT, REPO, Figures
from bench.sections import SECTIONS, headline, held_out, table

TEMPLATE = REPO / "docs" / "results.template.md"
PAGE = REPO / "docs" / "results.md"
README = REPO / "README.md"
BEGIN, END = "<!-- results:headline -->", "<!-- /results:headline -->"
__all__ = ["BEGIN", "END", "PAGE", "README", "main", "render_page", "render_readme", "table"]

PLACEHOLDER = re.compile(r"\{\{([^{}]+)\}\}")


def render_page(out: Path = OUT, template: Path = TEMPLATE) -> str:
    figures = Figures(out)

    def fill(match: re.Match[str]) -> str:
        ref = match.group(1).strip()
        if ref.startswith("section:"):
            return SECTIONS[ref.removeprefix("section:")](figures)
        return figures.value(ref)

    return reflow(PLACEHOLDER.sub(fill, template.read_text()))


def reflow(page: str) -> str:
    """Prose paragraphs and list items re-wrapped at 90 columns once the figures are in
    (a placeholder is longer than its value); tables, headings, code and comments kept."""
    blocks, out = page.split("\n\n"), []
    for block in blocks:
        lines = block.split("\n")
        if any(line.startswith(("|", "#", "```", "<!--", "    ")) for line in lines):
            out.append(block)
            continue
        items: list[list[str]] = []
        for line in lines:
            if line.startswith("- ") or not items:
                items.append([line])
            else:
                items[-1].append(line)
        wrapped = []
        for item in items:
            text = " ".join(part.strip() for part in item)
            bullet = item[0].startswith("- ")
            wrapped.append(
                textwrap.fill(
                    text,
                    width=90,
                    subsequent_indent="  " if bullet else "",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        out.append("\n".join(wrapped))
    return "\n\n".join(out)


def render_readme(readme: str, out: Path = OUT) -> str:
    """README.md with the text between the headline markers replaced by the render."""
    before, found, rest = readme.partition(BEGIN)
    _, found_end, after = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"README.md lacks the {BEGIN} … {END} markers")
    return f"{before}{BEGIN}\n{headline(Figures(out))}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.results", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed page is stale")
    parser.add_argument("--table", nargs="+", type=Path, help="print these eval JSON as tables")
    parser.add_argument("--held-out", nargs="+", type=Path, help="split answer runs (first 100)")
    args = parser.parse_args(argv)
    if args.table:
        for path in sorted(args.table):
            print(table(json.loads(path.read_text())) + "\n")
        return 0
    if args.held_out:
        print(held_out(args.held_out))
        return 0
    page, readme = render_page(), render_readme(README.read_text())
    if args.check:
        stale = [p for p, text in ((PAGE, page), (README, readme)) if p.read_text() != text]
        for path in stale:
            print(f"{path.relative_to(REPO)} differs from the render: run make results")
        return 1 if stale else 0
    PAGE.write_text(page)
    README.write_text(readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
