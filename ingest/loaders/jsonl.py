"""Corpus files of one `{"id", "title"?, "text"}` record a line, streamed with the size
limit applied per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ingest.identity import passage_key
from ingest.loaders.links import plain_section
from ingest.loaders.text import BINARY_SNIFF_BYTES, human_size, open_binary
from ingest.loaders.types import (
    BINARY,
    EMPTY,
    INVALID,
    TOO_LARGE,
    UNREADABLE,
    LoadedDocument,
    SkippedFile,
    make_document,
    normalize_text,
)

_MAX_BUFFERED_SKIPS = 1000


def _parse_record(raw: bytes, lineno: int, offset: int) -> tuple[str, str, str] | str | None:
    """(id, title, text) of one corpus line, a reason it is unusable, or None if blank."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"line {lineno}: invalid UTF-8 at byte {offset + exc.start}"
    if lineno == 1:
        line = line.removeprefix("\ufeff")
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(record, dict):
        return f"line {lineno}: expected a JSON object, got {type(record).__name__}"
    values: dict[str, str] = {}
    for key in ("id", "text", "title"):
        value = record.get(key)
        if value is None:
            if key == "title":
                continue
            return f"line {lineno}: missing {key!r}"
        if not isinstance(value, str):
            return f"line {lineno}: {key!r} must be a string, got {type(value).__name__}"
        values[key] = value
    if not values["id"].strip():
        return f"line {lineno}: empty 'id'"
    if not values["text"].strip():
        return f"line {lineno}: empty 'text'"
    return values["id"], values.get("title") or values["id"], values["text"]


def load_jsonl(
    path: Path, source: str, limit: int
) -> Iterator[tuple[LoadedDocument, str] | SkippedFile]:
    """Stream a corpus file. Problems before the first good record are held back: if the file
    has no good record at all (say a `questions.jsonl` next to the corpus) it is reported
    once, as a whole, instead of once per line."""
    try:
        handle = open_binary(path)  # closed by the `with` below
    except PermissionError:
        yield SkippedFile(source, "permission denied", UNREADABLE)
        return
    except OSError as exc:
        yield SkippedFile(source, f"could not read ({exc.strerror or exc})", UNREADABLE)
        return
    with handle:
        try:
            head = handle.read(BINARY_SNIFF_BYTES)
        except OSError as exc:
            yield SkippedFile(source, f"could not read ({exc.strerror or exc})", UNREADABLE)
            return
        if not head.strip():
            yield SkippedFile(source, "empty file", EMPTY)
            return
        if b"\x00" in head:
            yield SkippedFile(source, "binary file", BINARY)
            return
        handle.seek(0)
        held: list[SkippedFile] = []
        held_overflow = 0
        good = 0
        lineno = 0
        offset = 0
        while raw := handle.readline(limit + 1):
            lineno += 1
            line_start = offset
            kind = INVALID
            offset += len(raw)
            if len(raw) > limit and not raw.endswith(b"\n"):
                while rest := handle.readline(1 << 20):
                    offset += len(rest)
                    if rest.endswith(b"\n"):
                        break
                size = offset - line_start
                kind = TOO_LARGE
                parsed: tuple[str, str, str] | str | None = (
                    f"line {lineno}: record too large ({human_size(size)} > "
                    f"{human_size(limit)} limit)"
                )
            else:
                parsed = _parse_record(raw, lineno, line_start)
            if parsed is None:
                continue
            origin = f"{source}:{lineno}"
            if isinstance(parsed, str):
                skipped = SkippedFile(origin, parsed, kind)
                if good:
                    yield skipped
                elif len(held) < _MAX_BUFFERED_SKIPS:
                    held.append(skipped)
                else:
                    held_overflow += 1
                continue
            if not good:
                yield from held
                if held_overflow:
                    yield SkippedFile(
                        source, f"{held_overflow} more bad lines before line {lineno}", INVALID
                    )
            good += 1
            doc_id, title, text = parsed
            normalized = normalize_text(text)
            sections = [plain_section((), normalized)]
            key = passage_key(source, doc_id)
            yield make_document(doc_id, source, title, sections, key=key), origin
        if not good:
            if lineno == 0 or not held:
                yield SkippedFile(source, "no records", EMPTY)
            else:
                bad = len(held) + held_overflow
                yield SkippedFile(
                    source,
                    f"no valid records ({bad} bad lines; first: {held[0].reason})",
                    INVALID,
                )
