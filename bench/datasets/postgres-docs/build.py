"""Re-create `pages/` from the Debian package `postgresql-doc-15`.

    .venv/bin/python bench/datasets/postgres-docs/build.py            # apt-get download it
    .venv/bin/python bench/datasets/postgres-docs/build.py --deb FILE # a downloaded .deb
    .venv/bin/python bench/datasets/postgres-docs/build.py --source DIR [--force]

The subset is PostgreSQL 15's SQL command reference: the pages `sql-*.html` of
`/usr/share/doc/postgresql-doc-15/html/`, one page per SQL command (ALTER TABLE, COPY,
CREATE INDEX, VACUUM, ...), less the pages in `EXCLUDED`, which share the file-name prefix
but are not command pages. The rest of the manual (1,173 pages in all) is left out to keep
the set small; a command page is self-contained prose in one fixed layout (synopsis,
description, parameters, notes, examples, compatibility), so it is the part a developer
looks things up in.

The package need not be installed: by default the build fetches the .deb with
`apt-get download` and unpacks it with `dpkg-deb -x` into a temporary folder. The shipped
pages hold no `<svg>`, `<script>` or `<style>` element (the stylesheet is a separate file,
not copied), so each page is copied byte for byte; the build refuses a page that holds one,
and verifies that neorag's loader extracts the same title and sections from the copy as
from the shipped file.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from debian_pages import installed_version, loaded  # noqa: E402

PACKAGE = "postgresql-doc-15"
VERSION = "15.20-0+deb12u1"
DOC_PATH = Path("usr/share/doc/postgresql-doc-15/html")
SOURCE = Path("/") / DOC_PATH
_DROPPED_ELEMENT = re.compile(r"<(svg|script|style)\b", re.IGNORECASE)

_NOT_A_COMMAND = "not a command page: "
EXCLUDED: dict[str, str] = {
    "sql-commands.html": _NOT_A_COMMAND + "the generated list of the command pages",
    "sql-keywords-appendix.html": _NOT_A_COMMAND + "appendix C, a table of keywords",
    "sql-syntax.html": _NOT_A_COMMAND + "chapter 4's table of contents",
    "sql-syntax-lexical.html": _NOT_A_COMMAND + "chapter 4.1, lexical structure",
    "sql-expressions.html": _NOT_A_COMMAND + "chapter 4.2, value expressions",
    "sql-syntax-calling-funcs.html": _NOT_A_COMMAND + "chapter 4.3, calling functions",
}


def selected_pages(source: Path) -> list[Path]:
    return [p for p in sorted(source.glob("sql-*.html")) if p.name not in EXCLUDED]


def build(source: Path, out: Path) -> int:
    pages = selected_pages(source)
    if not pages:
        raise SystemExit(f"no sql-*.html pages under {source}: is {PACKAGE} unpacked there?")
    missing = sorted(set(EXCLUDED) - {p.name for p in source.glob("sql-*.html")})
    if missing:
        print(f"note: excluded pages not in this version: {', '.join(missing)}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for page in pages:
        data = page.read_bytes()
        if _DROPPED_ELEMENT.search(data.decode("utf-8")):
            raise SystemExit(f"{page.name}: holds an svg, script or style element; strip it")
        target = out / page.name
        target.write_bytes(data)
        shipped, copy = loaded(page), loaded(target)
        if (shipped.title, shipped.sections) != (copy.title, copy.sections):
            raise SystemExit(f"{page.name}: the copy does not read like the shipped page")
    return len(pages)


def deb_version(deb: Path) -> str:
    done = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def downloaded(folder: Path) -> Path:
    """The package's .deb, fetched into `folder` by apt (no root, no installation)."""
    subprocess.run(["apt-get", "download", f"{PACKAGE}={VERSION}"], cwd=folder, check=True)
    debs = sorted(folder.glob(f"{PACKAGE}_*.deb"))
    if not debs:
        raise SystemExit(f"apt-get download left no {PACKAGE} .deb in {folder}")
    return debs[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deb", type=Path, help="a downloaded postgresql-doc-15 .deb")
    parser.add_argument("--source", type=Path, help="an installed or unpacked html/ folder")
    parser.add_argument("--out", type=Path, default=HERE / "pages")
    parser.add_argument(
        "--force", action="store_true", help=f"build from a version other than {VERSION}"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.source:
            source, version = args.source, installed_version(PACKAGE)
        else:
            deb = args.deb or downloaded(Path(tmp))
            version = deb_version(deb)
            subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
            source = Path(tmp) / DOC_PATH
        if version != VERSION and not args.force:
            raise SystemExit(
                f"{PACKAGE} {version or 'is not installed'}; this set was built from "
                f"{VERSION} (--deb FILE, or --force to build from another version or from "
                "an unpacked folder)"
            )
        count = build(source, args.out)
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"{count} pages, {size / 1e6:.1f} MB -> {args.out}")


if __name__ == "__main__":
    main()
