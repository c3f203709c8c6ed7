"""Uploaded files (chat and HTTP API): kept under `<data_dir>/uploads/<collection>/`.

Each file goes into a folder named after a hash of its bytes, under its own (sanitised)
name: the same file uploaded twice is one document, and two different files with the same
name are two documents — an upload never overwrites another one.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from app.settings import Settings
from graph.errors import NeoragError
from ingest.loaders import upload_refusal

_UNSAFE = re.compile(r"[^\w.\- ]+")


def safe_name(name: str) -> str:
    """A plain file name (no folders, no leading dots, no odd characters)."""
    base = Path(name.replace("\\", "/")).name
    return _UNSAFE.sub("_", base).lstrip(".").strip() or "upload.txt"


class UnsupportedUpload(NeoragError):
    """An upload neorag would not index (HTTP 415): refused, so nothing of it is kept."""


def check_uploads(files: Iterable[tuple[str, bytes]]) -> None:
    """Refuse the whole upload if one file is of a type neorag does not read (or binary
    under a text format's name), before any is kept: a kept file would only be skipped."""
    for name, data in files:
        if (refusal := upload_refusal(safe_name(name), data)) is not None:
            raise UnsupportedUpload(refusal)


def save_upload(settings: Settings, name: str, data: bytes) -> Path:
    """Write one upload (atomically) and return its path."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = settings.uploads_dir / digest
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / safe_name(name)
    if not path.exists():
        tmp = folder / f".{path.name}.part"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path
