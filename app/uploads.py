"""Uploaded files (chat and HTTP API): kept under `<data_dir>/uploads/<collection>/`.

Each file goes into a folder named after a hash of its bytes, under its own (sanitised)
name: the same file uploaded twice is one document, and two different files with the same
name are two documents — an upload never overwrites another one.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from app.settings import Settings

_UNSAFE = re.compile(r"[^\w.\- ]+")


def safe_name(name: str) -> str:
    """A plain file name (no folders, no leading dots, no odd characters)."""
    base = Path(name.replace("\\", "/")).name
    return _UNSAFE.sub("_", base).lstrip(".").strip() or "upload.txt"


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
