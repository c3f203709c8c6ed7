"""Reading stored document ids in tests: `<collection>:<absolute source>[#<record id>]`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def name_of(doc_id: str, root: Path | None = None) -> str:
    """The name a test gave a document: a corpus record's id, else the file's path
    relative to `root` (or its file name)."""
    key = doc_id.partition(":")[2] or doc_id
    if "#" in key:
        return key.rsplit("#", 1)[1]
    path = Path(key)
    if root is not None:
        return path.relative_to(root.resolve()).as_posix()
    return path.name


def names(doc_ids: Iterable[str], root: Path | None = None) -> list[str]:
    return [name_of(d, root) for d in doc_ids]
