"""What the last ingests parsed, so a re-ingest parses only the files that changed.

Telling an unchanged document apart needs its content hash, which is taken from the parsed
text; parsing every page of a large tree on every re-ingest (HTML above all) made a
one-document change cost minutes at 50k chunks. This cache remembers, per file, the sha256
of its bytes and the documents (key → stored content hash) it gave. A file whose bytes hash
the same is not parsed again when the store still holds every one of those documents with
that hash; anything else (a changed, new or failed file, a crash between the write and the
cache, another process's ingest into the same collection) is parsed as before. So the cache
can only skip work the store confirms, never hide a change.

It is keyed by everything that changes what a file's documents are: the ingest
configuration's fingerprint, the file size limit, the loaders' own source and the versions
of the parsing libraries. It lives beside the collection's search-index files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path

from graph.types import DocumentRecord
from ingest.identity import document_id
from ingest.loaders import LoadedDocument, UnchangedFile
from ingest.loaders.walk import Known

FILE_NAME = "scan-cache.json"
PARSERS = ("beautifulsoup4", "pypdf", "PyYAML")


@cache
def loaders_fingerprint() -> str:
    """The loaders' source and the parsing libraries' versions."""
    h = hashlib.sha256()
    folder = Path(__file__).with_name("loaders")
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    for name in PARSERS:
        try:
            h.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=-".encode())
    return h.hexdigest()[:16]


def cache_key(config_fingerprint: str, max_file_bytes: int) -> str:
    return f"{config_fingerprint}:{max_file_bytes}:{loaders_fingerprint()}"


class ScanCache:
    """Per file: its bytes' hash and {document key: stored content hash}."""

    def __init__(self, path: Path, key: str, collection: str) -> None:
        self.path = path
        self.key = key
        self.collection = collection
        self.files: dict[str, dict] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("key") == key:
            self.files = data.get("files", {})

    def known(self, stored: dict[str, DocumentRecord]) -> Known:
        """The `scan(known=...)` hook: a file's document keys if it is unchanged."""

        def lookup(source: str, file_hash: str) -> Sequence[str] | None:
            entry = self.files.get(source)
            if not entry or entry.get("sha256") != file_hash or not entry.get("docs"):
                return None
            for key, content_hash in entry["docs"].items():
                record = stored.get(document_id(self.collection, key))
                if record is None or record.content_hash != content_hash:
                    return None
            return list(entry["docs"])

        return lookup

    def update(
        self,
        root: Path,
        parsed: Iterable[tuple[LoadedDocument, str]],
        unchanged: Iterable[UnchangedFile],
        stored_now: dict[str, DocumentRecord],
        seen_sources: set[str],
        skipped_sources: Iterable[str] = (),
    ) -> None:
        """Record this scan under `root`: files whose every document is now stored with
        the hash the scan gave it (`parsed` pairs each document with that hash; one that
        failed to build keeps its older stored version, so its file is parsed again next
        time); files under `root` the scan did not see are dropped, and so are files with a
        skipped part (a malformed corpus line, say), so every ingest reports it again."""
        skipped = list(skipped_sources)  # a file, or `file:line` for a corpus line
        reported = set(skipped) | {s.rsplit(":", 1)[0] for s in skipped}
        prefix = str(root).rstrip("/") + "/"
        files = {
            s: e
            for s, e in self.files.items()
            if s in seen_sources or not (s == str(root) or s.startswith(prefix))
        }
        for item in unchanged:
            entry = self.files.get(item.source)
            if entry:
                files[item.source] = entry
        by_file: dict[str, list[tuple[LoadedDocument, str]]] = {}
        for doc, expected in parsed:
            if doc.file_hash:
                by_file.setdefault(doc.source, []).append((doc, expected))
        for source, docs in by_file.items():
            if source in reported:
                files.pop(source, None)
                continue
            entry_docs = {}
            for doc, expected in docs:
                record = stored_now.get(document_id(self.collection, doc.key))
                if record is None or record.content_hash != expected:
                    files.pop(source, None)  # not stored as scanned: parse it again
                    break
                entry_docs[doc.key] = expected
            else:
                files[source] = {"sha256": docs[0][0].file_hash, "docs": entry_docs}
        self.files = files

    def save(self) -> None:
        """Written aside and renamed, so a reader never sees half a file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps({"key": self.key, "files": self.files}), encoding="utf-8")
        os.replace(partial, self.path)
