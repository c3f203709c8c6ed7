"""Re-create `pages/` from the installed Debian package `sqlite3-doc`.

    apt-get install sqlite3-doc          # 3.40.1-2+deb12u2 on Debian 12
    .venv/bin/python bench/datasets/sqlite-docs/build.py [--source DIR] [--force]

The subset is SQLite's top-level documentation pages (`/usr/share/doc/sqlite3/*.html`: the
SQL language reference, pragmas, the CLI, WAL, limits, extensions, file format, ...) less
the pages in `EXCLUDED`, each with its reason. The per-function C API pages (`c3ref/`), the
release logs (`releaselog/`), `session/` and `syntax/` are left out: they are generated
reference tables, not the prose developers read for how-to answers.

Each page is copied byte for byte as shipped except that its `<svg>`, `<script>` and
`<style>` elements are cut out: the inline SVG syntax diagrams make some pages over 1 MB,
and neorag's HTML loader drops those elements anyway. The build verifies that, for every
page, the loader extracts exactly the same title and sections from the copy as from the
shipped file.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from debian_pages import installed_version, loaded  # noqa: E402

PACKAGE = "sqlite3-doc"
VERSION = "3.40.1-2+deb12u2"
SOURCE = Path("/usr/share/doc/sqlite3")
_REMOVED = re.compile(r"<(svg|script|style)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)

_INDEXES = "generated index, cross-reference or site listing"
_HISTORY = "release history or news"
_OLD = "describes SQLite 2 or an upgrade from a 2007-2008 release"
_AGGREGATE = "one page concatenating content published elsewhere"
_PAPERWORK = "legal or press paperwork"
EXCLUDED: dict[str, str] = {
    "doc_backlink_crossref.html": _INDEXES,
    "doc_keyword_crossref.html": _INDEXES,
    "doc_pagelink_crossref.html": _INDEXES,
    "doc_target_crossref.html": _INDEXES,
    "doclist.html": _INDEXES,
    "docs.html": _INDEXES,
    "keyword_index.html": _INDEXES,
    "sitemap.html": _INDEXES,
    "syntax.html": _INDEXES,
    "lang.html": _INDEXES,
    "index.html": _INDEXES,
    "hp1.html": "a 'JavaScript required' stub",
    "sqlite.html": "a one-line redirect stub",
    "changes.html": _HISTORY,
    "chronology.html": _HISTORY,
    "news.html": _HISTORY,
    "oldnews.html": _HISTORY,
    "34to35.html": _OLD,
    "35to36.html": _OLD,
    "c_interface.html": _OLD,
    "datatypes.html": _OLD,
    "capi3.html": _OLD,
    "vdbe.html": _OLD,
    "capi3ref.html": _AGGREGATE + " (the c3ref/ pages)",
    "requirements.html": _AGGREGATE + " (requirement sentences of every page)",
    "syntaxdiagrams.html": _AGGREGATE + " (the syntax diagrams)",
    "fileformat.html": "a byte-identical duplicate of fileformat2.html",
    "pressrelease-20071212.html": _PAPERWORK,
    "consortium_agreement-20071201.html": _PAPERWORK,
    "copyright-release.html": _PAPERWORK,
}


def selected_pages(source: Path) -> list[Path]:
    return [p for p in sorted(source.glob("*.html")) if p.name not in EXCLUDED]


def stripped(html: str) -> str:
    """The page without the elements neorag's loader drops, cut out of the source text so
    everything else stays byte for byte as shipped (`build` checks the loader's view)."""
    return _REMOVED.sub("", html)


def build(source: Path, out: Path) -> int:
    pages = selected_pages(source)
    if not pages:
        raise SystemExit(f"no HTML pages under {source}: is {PACKAGE} installed?")
    missing = sorted(set(EXCLUDED) - {p.name for p in source.glob("*.html")})
    if missing:
        print(f"note: excluded pages not in this version: {', '.join(missing)}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for page in pages:
        target = out / page.name
        target.write_text(stripped(page.read_text(encoding="utf-8")), encoding="utf-8")
        shipped, copy = loaded(page), loaded(target)
        if (shipped.title, shipped.sections) != (copy.title, copy.sections):
            raise SystemExit(f"{page.name}: stripping changed the text the loader extracts")
    return len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=HERE / "pages")
    parser.add_argument(
        "--force", action="store_true", help=f"build from a version other than {VERSION}"
    )
    args = parser.parse_args()
    version = installed_version(PACKAGE)
    if version != VERSION and not args.force:
        raise SystemExit(
            f"{PACKAGE} {version or 'is not installed'}; this set was built from {VERSION} "
            "(apt-get install sqlite3-doc, or --force to build from another version)"
        )
    count = build(args.source, args.out)
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"{count} pages, {size / 1e6:.1f} MB -> {args.out}")


if __name__ == "__main__":
    main()
