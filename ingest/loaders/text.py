"""Reading a file's bytes and decoding plain text: size limit, binary sniffing, UTF-8/16."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import BinaryIO

from ingest.loaders.types import BINARY, EMPTY, INVALID, TOO_LARGE, UNREADABLE, SkippedFile

BINARY_SNIFF_BYTES = 8192


def human_size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    if n_bytes < 1024**2:
        return f"{n_bytes / 1024:.1f} KB"
    if n_bytes < 1024**3:
        return f"{n_bytes / 1024**2:.1f} MB"
    return f"{n_bytes / 1024**3:.1f} GB"


def _too_large(size: int, limit: int) -> str:
    return f"too large ({human_size(size)} > {human_size(limit)} limit)"


def open_binary(path: Path) -> BinaryIO:
    return open(path, "rb")


def read_bytes(path: Path, source: str, limit: int) -> bytes | SkippedFile:
    try:
        with open_binary(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                return SkippedFile(source, _too_large(size, limit), TOO_LARGE)
            data = handle.read(limit + 1)
    except PermissionError:
        return SkippedFile(source, "permission denied", UNREADABLE)
    except OSError as exc:
        return SkippedFile(source, f"could not read ({exc.strerror or exc})", UNREADABLE)
    if len(data) > limit:
        return SkippedFile(source, _too_large(len(data), limit), TOO_LARGE)
    if not data:
        return SkippedFile(source, "empty file", EMPTY)
    return data


def decode_text(data: bytes, source: str) -> str | SkippedFile:
    """UTF-8 (BOM tolerated) or BOM-marked UTF-16; NUL bytes early on mean binary."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            return SkippedFile(source, f"invalid UTF-16 at byte {exc.start}", INVALID)
    else:
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            return SkippedFile(source, "binary file", BINARY)
        skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            return SkippedFile(source, f"invalid UTF-8 at byte {exc.start + skip}", INVALID)
    if not text.strip():
        return SkippedFile(source, "empty file (whitespace only)", EMPTY)
    return text
