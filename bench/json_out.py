"""How the benchmarks hand back a result: JSON on stdout, and in `--out` if given
(bench/out/*.json are the committed figures docs/results.md renders). Every result is
stamped with the commit and the date it ran, so the page can name them.

python -m bench.json_out FILE…   stamps files another command wrote (`neorag eval --json`)
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def current_commit() -> str:
    """The checkout's short commit, recorded with a result so its code can be found
    (marked `+dirty` when tracked code differs from it; bench/out itself does not count)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/out"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}+dirty" if head and dirty else head


def stamped(result: dict[str, Any]) -> dict[str, Any]:
    """The result with `commit` and `date` (UTC) added, unless it already names them."""
    out = dict(result)
    out.setdefault("commit", current_commit() or "commit not recorded")
    out.setdefault("date", datetime.now(UTC).date().isoformat())
    return out


def emit(result: dict[str, Any], out: Path | None) -> None:
    text = json.dumps(stamped(result), indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)


def stamp_file(path: Path) -> None:
    """Adds commit and date to a JSON file written by another command, in place."""
    path.write_text(json.dumps(stamped(json.loads(path.read_text())), indent=2) + "\n")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        stamp_file(Path(name))
