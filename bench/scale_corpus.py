"""Distractor text for the scale benchmark: Debian's documentation packages.

Real English prose that installs offline from the Debian archive (no root needed: the
packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`):

- `linux-doc-6.1`: the Linux kernel's documentation, Sphinx HTML, GPL-2.0 (about 3,200
  pages, ~127k chunks with the default chunker);
- `python3.11-doc`: the Python 3.11 documentation, Sphinx HTML, PSF-2.0 (~530 pages,
  ~33k chunks);
- `postgresql-doc-15`: the PostgreSQL 15 manual, HTML, PostgreSQL licence (~1,170 pages);
- `git-doc`: Git's manual pages and guides, HTML, GPL-2.0 (~240 pages);
- past 200k chunks, the Django, SQLAlchemy, CMake, Node.js, Erlang/OTP, SciPy, pandas and
  OpenJDK 17 documentation packages (HTML; licences in `PACKAGES`).

Nothing of it enters the repository: packages and pages live under the cache directory
(default `~/.cache/neorag/scale`). Pages are taken package by package in sorted path order,
each counted once with neorag's own loader and chunker (counts are cached per package in
`pages-<package>.json`), so a size's page set is a deterministic prefix of one fixed list.
The deb files' versions and sha256 are recorded with every benchmark result, since the
archive may serve newer versions later.

    python bench/scale_corpus.py --cache ~/.cache/neorag/scale   # fetch, unpack, count
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PACKAGES = {  # package -> (licence, folder of its HTML pages inside the package)
    "linux-doc-6.1": ("GPL-2.0", "usr/share/doc/linux-doc-6.1/html"),
    "python3.11-doc": ("PSF-2.0", "usr/share/doc/python3.11/html"),
    "postgresql-doc-15": ("PostgreSQL", "usr/share/doc/postgresql-doc-15/html"),
    "git-doc": ("GPL-2.0", "usr/share/doc/git-doc"),
    # Beyond 200k chunks (the larger sizes): appended, so every smaller size keeps its pages.
    "python-django-doc": ("BSD-3-Clause", "usr/share/doc/python-django-doc/html"),
    "python-sqlalchemy-doc": ("MIT", "usr/share/doc/python-sqlalchemy-doc/html"),
    "cmake-doc": ("BSD-3-Clause", "usr/share/doc/cmake-data/html"),
    "nodejs-doc": ("MIT", "usr/share/doc/nodejs/api"),
    "erlang-doc": ("Apache-2.0", "usr/share/doc/erlang-doc"),
    "python-scipy-doc": ("BSD-3-Clause", "usr/share/doc/python-scipy-doc/html"),
    "python-pandas-doc": ("BSD-3-Clause", "usr/share/doc/python-pandas-doc/html"),
    "openjdk-17-doc": (
        "GPL-2.0 WITH Classpath-exception-2.0",
        "usr/share/doc/openjdk-17-jre-headless/api",
    ),
}
SKIPPED_PAGES = ("genindex", "search.html", "py-modindex", "_sources", "_static", "_images")
DEFAULT_CACHE = Path.home() / ".cache" / "neorag" / "scale"


@dataclass(frozen=True, slots=True)
class Page:
    package: str
    path: str  # absolute path of the unpacked HTML file
    chunks: int


def fetch(cache: Path) -> dict[str, dict[str, str]]:
    """Download and unpack each package once; returns {package: {version, sha256, licence}}."""
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    sources: dict[str, dict[str, str]] = {}
    for package, (licence, _) in PACKAGES.items():
        found = sorted(debs.glob(f"{package}_*.deb"))
        if not found:
            subprocess.run(
                ["apt-get", "download", package], cwd=debs, check=True, capture_output=True
            )
            found = sorted(debs.glob(f"{package}_*.deb"))
        deb = found[-1]
        root = cache / "unpacked" / package
        if not (root / ".complete").exists():
            root.mkdir(parents=True, exist_ok=True)
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            (root / ".complete").touch()
        sources[package] = {
            "deb": deb.name,
            "version": deb.name.split("_")[1],
            "sha256": hashlib.sha256(deb.read_bytes()).hexdigest(),
            "licence": licence,
        }
    return sources


def pages(cache: Path) -> list[Page]:
    """Every usable page with its chunk count, in the fixed benchmark order."""
    return [page for package in PACKAGES for page in package_pages(cache, package)]


def package_pages(cache: Path, package: str) -> list[Page]:
    listing = cache / f"pages-{package}.json"
    if listing.exists():
        return [Page(**p) for p in json.loads(listing.read_text())]
    from ingest.chunkers import chunk_document
    from ingest.config import IngestConfig
    from ingest.loaders import LoadedDocument, scan
    from ingest.models import IngestModels

    cfg = IngestConfig()
    count_tokens = IngestModels(cfg.models).count_tokens
    out: list[Page] = []
    for path in page_paths(cache, package):
        docs = [d for d in scan(path, cfg.max_file_bytes) if isinstance(d, LoadedDocument)]
        chunks = sum(len(chunk_document(d, cfg.chunking, count_tokens)) for d in docs)
        if chunks:
            out.append(Page(package, str(path), chunks))
    listing.write_text(json.dumps([asdict(p) for p in out]))
    return out


def page_paths(cache: Path, package: str) -> list[Path]:
    """The package's usable HTML pages in the fixed benchmark order (before counting)."""
    root = cache / "unpacked" / package / PACKAGES[package][1]
    return [
        path
        for path in sorted(root.rglob("*.html"))
        if not any(part in str(path.relative_to(root)) for part in SKIPPED_PAGES)
    ]


def select(all_pages: list[Page], chunks: int) -> list[Page]:
    """The shortest prefix of the page list holding at least `chunks` chunks."""
    chosen: list[Page] = []
    total = 0
    for page in all_pages:
        if total >= chunks:
            break
        chosen.append(page)
        total += page.chunks
    if total < chunks:
        raise SystemExit(f"the distractor packages hold {total} chunks, fewer than {chunks}")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    sources = fetch(args.cache)
    listing = pages(args.cache)
    by_package = {p: sum(x.chunks for x in listing if x.package == p) for p in PACKAGES}
    print(json.dumps({"sources": sources, "pages": len(listing), "chunks": by_package}, indent=1))


if __name__ == "__main__":
    main()
