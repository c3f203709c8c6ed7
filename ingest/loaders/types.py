"""The loaders' output types, the content hash that recognises unchanged documents, and the
text normalisation every format goes through."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple


class LinkSpan(NamedTuple):
    """Where a link's visible text sits in `Section.text` (character offsets)."""

    start: int
    end: int
    target: str


@dataclass(slots=True)
class Section:
    """A run of text under one heading path. `links` lists every target once, in order;
    `link_spans` locates those that have a place in the text (PDF annotations and links in
    headings have none and belong to the whole section)."""

    path: tuple[str, ...]
    text: str
    links: tuple[str, ...] = ()
    link_spans: tuple[LinkSpan, ...] = ()


@dataclass(slots=True)
class LoadedDocument:
    """One document ready for chunking. `id` names it within its scan (the path relative to
    the root, or a corpus record's id); `key` names its source on this host (the file's
    absolute path, plus `#<record id>` for a corpus record) and is what the stored document
    id is made from (`ingest.identity`). `content_hash` is derived from the content when not
    given (see `document_hash`)."""

    id: str
    source: str
    title: str
    sections: list[Section]
    content_hash: str = field(default="")
    key: str = field(default="")
    file_hash: str = field(default="")  # sha256 of the file's bytes, when the scan took it

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = document_hash(self.title, self.sections)
        if not self.key:
            self.key = self.source

    @property
    def text(self) -> str:
        return "\n\n".join(section.text for section in self.sections)


@dataclass(slots=True)
class UnchangedFile:
    """A file whose bytes are those of an earlier scan whose documents the store still
    holds as they were: it is not parsed again (`scan(known=...)`)."""

    source: str
    file_hash: str
    keys: tuple[str, ...]


# What kind of thing kept a file (or a corpus record) out, for summaries and `--json`:
UNSUPPORTED = "unsupported"  # not a format neorag reads (by extension), or not a regular file
HIDDEN = "hidden"  # a name starting with "." inside a folder: not walked (.git, .obsidian, ...)
TOO_LARGE = "too_large"  # over NEORAG_INGEST__MAX_FILE_BYTES (a corpus record: over it alone)
BINARY = "binary"  # NUL bytes where text was expected
EMPTY = "empty"  # no bytes, only whitespace, no text or no records
UNREADABLE = "unreadable"  # permission denied, an I/O error, a broken symbolic link
OUTSIDE_ROOTS = "outside_roots"  # its real path lies outside the allowed ingest roots
INVALID = "invalid"  # undecodable text, a malformed record, a file its parser rejects
DUPLICATE = "duplicate"  # a document id loaded before in the same scan
FAILED = "failed"  # loaded, but chunking, analysis or embedding raised
# Reported but not problems: a folder of notes also holds images, .git, ...
NOT_PROBLEMS = frozenset({UNSUPPORTED, HIDDEN})
SKIP_KINDS = (
    UNSUPPORTED, HIDDEN, TOO_LARGE, BINARY, EMPTY, UNREADABLE, OUTSIDE_ROOTS, INVALID,
    DUPLICATE, FAILED,
)  # fmt: skip


@dataclass(slots=True)
class SkippedFile:
    """Something that was not loaded, why (`reason`, for people) and what kind of problem
    (`kind`, one of SKIP_KINDS); for a jsonl line `source` is `file:line`."""

    source: str
    reason: str
    kind: str


def document_hash(title: str, sections: Iterable[Section]) -> str:
    """sha256 over everything a document contributes to the graph (not its location), so a
    moved or touched-but-unchanged file is recognised as unchanged."""
    payload = [title, [[list(s.path), s.text, list(s.links)] for s in sections]]
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BLANK_RUNS = re.compile(r"\n{3,}")
WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFC, `\\n` newlines (also for CR, U+2028/9 and form feeds), no control characters,
    no trailing spaces, at most one blank line in a row, no leading/trailing blank lines."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n").replace("\f", "\n\n")
    text = _CONTROL.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n").rstrip()


def one_line(text: str) -> str:
    return WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def make_document(
    doc_id: str, source: str, title: str, sections: list[Section], key: str = ""
) -> LoadedDocument:
    """A document whose title is one line, falling back to its id."""
    return LoadedDocument(doc_id, source, one_line(title) or doc_id, sections, key=key)
