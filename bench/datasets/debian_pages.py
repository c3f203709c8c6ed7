"""What the documentation sets' build.py scripts share: the installed version of the Debian
package a set is built from, and a page as neorag's own loader reads it (each build checks
that its copy reads the same as the shipped page)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ingest.loaders import LoadedDocument, scan  # noqa: E402

MAX_FILE_BYTES = 20_000_000


def installed_version(package: str) -> str | None:
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return None
    return done.stdout.strip() or None


def loaded(path: Path) -> LoadedDocument:
    items = list(scan(path, MAX_FILE_BYTES))
    if len(items) != 1 or not isinstance(items[0], LoadedDocument):
        raise SystemExit(f"{path}: neorag's loader did not load it ({items})")
    return items[0]
