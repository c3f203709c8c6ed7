"""A local copy of the edge corpus as of the last edge build, so an update reads from the store
only the chunks of the documents that changed.

Without it, every update reads every chunk's facts back from the store (text, entities,
questions, embedding) and every chunk's edge state: on Neo4j that read grows with the corpus
and dominates a one-document change (the server reads each chunk's float array).

The copy is one SQLite file beside the search indexes (`indexes/edge-corpus.sqlite`): a row
per chunk (its facts as the store returned them, its embedding's bytes, its question-term
counts) and the `EdgeState` text of the build it belongs to. An update uses it only when that
text equals the store's current one; the store's state moves in the same transaction as the
edges, so a copy left behind by a crash, a copy of another store, or a damaged file is never
used: the update reads the store as before, and the copy is rewritten after the refresh. The
store stays the only source of truth; deleting the file costs one full read.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graph.types import ChunkRecord, EntityMention
from ingest.edges.corpus import EdgeCorpus

log = logging.getLogger(__name__)

FILE_NAME = "edge-corpus.sqlite"
_FORMAT = "1"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
    "facts TEXT NOT NULL, dtype TEXT, embedding BLOB, terms TEXT)",
    "CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id)",
)


@dataclass(slots=True)
class CachedCorpus:
    """The chunks outside the changed documents, and the question-term counts of those that
    have questions."""

    chunks: list[ChunkRecord]
    terms: dict[str, dict[str, int]]


class EdgeWorkspace:
    def __init__(self, path: Path) -> None:
        self.path = path

    def unchanged(self, stamp: str | None, changed_docs: Iterable[str]) -> CachedCorpus | None:
        """The copy's chunks outside `changed_docs`, if the copy is of the build `stamp`
        describes; None otherwise (no file, another build, a damaged file)."""
        if not stamp or not self.path.exists():
            return None
        changed = set(changed_docs)
        try:
            with closing(sqlite3.connect(self.path)) as db:
                meta = dict(db.execute("SELECT key, value FROM meta"))
                if meta.get("format") != _FORMAT or meta.get("state") != stamp:
                    return None
                chunks: list[ChunkRecord] = []
                terms: dict[str, dict[str, int]] = {}
                rows = db.execute("SELECT id, doc_id, facts, dtype, embedding, terms FROM chunks")
                for cid, doc_id, facts, dtype, blob, counts in rows:
                    if doc_id in changed:
                        continue
                    chunks.append(_record(cid, doc_id, json.loads(facts), dtype, blob))
                    if counts is not None:
                        terms[cid] = json.loads(counts)
        except (sqlite3.Error, ValueError, TypeError, KeyError) as exc:
            log.warning(
                "edge workspace %s unreadable (%s); reading the store instead", self.path, exc
            )
            return None
        return CachedCorpus(chunks, terms)

    def replace(self, corpus: EdgeCorpus, stamp: str) -> None:
        """Make the copy the whole `corpus`, of the build `stamp` describes."""
        self._write(corpus, corpus.chunks, stamp, drop_all=True)

    def update(self, corpus: EdgeCorpus, changed_docs: Iterable[str], stamp: str) -> None:
        """Replace the rows of `changed_docs` with their chunks in `corpus`."""
        docs = sorted(set(changed_docs))
        self._write(corpus, corpus.chunks_of(docs), stamp, drop_docs=docs)

    def _write(
        self,
        corpus: EdgeCorpus,
        chunks: list[ChunkRecord],
        stamp: str,
        *,
        drop_all: bool = False,
        drop_docs: list[str] | None = None,
    ) -> None:
        """One SQLite transaction: a crash leaves the old copy with its old stamp. A failure
        only costs the next update a full read, so it is logged, not raised."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path)) as db, db:
                for statement in _SCHEMA:
                    db.execute(statement)
                if drop_all:
                    db.execute("DELETE FROM chunks")
                for start in range(0, len(drop_docs or ()), 500):
                    part = (drop_docs or [])[start : start + 500]
                    marks = ",".join("?" * len(part))
                    db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", part)
                db.executemany(
                    "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                    (_row(c, corpus.terms.get(c.id)) for c in chunks),
                )
                db.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [("format", _FORMAT), ("state", stamp)],
                )
        except (sqlite3.Error, OSError) as exc:
            log.warning(
                "edge workspace %s not written (%s); the next update reads the store",
                self.path,
                exc,
            )
            self.path.unlink(missing_ok=True)


def _row(c: ChunkRecord, terms: dict[str, int] | None) -> tuple:
    facts = [
        c.ordinal,
        c.title,
        c.text,
        list(c.section_path),
        c.n_tokens,
        list(c.links),
        list(c.questions),
        [[e.name, e.label, e.count] for e in c.entities],
    ]
    emb = c.embedding
    return (
        c.id,
        c.doc_id,
        json.dumps(facts, separators=(",", ":")),
        None if emb is None else emb.dtype.str,
        None if emb is None else np.ascontiguousarray(emb).tobytes(),
        None if terms is None else json.dumps(dict(sorted(terms.items())), separators=(",", ":")),
    )


def _record(
    cid: str, doc_id: str, facts: list, dtype: str | None, blob: bytes | None
) -> ChunkRecord:
    ordinal, title, text, section_path, n_tokens, links, questions, entities = facts
    return ChunkRecord(
        id=cid,
        doc_id=doc_id,
        ordinal=int(ordinal),
        title=title,
        text=text,
        section_path=tuple(section_path),
        n_tokens=int(n_tokens),
        embedding=None if blob is None else np.frombuffer(blob, dtype=np.dtype(dtype)),
        entities=tuple(EntityMention(n, lb, int(k)) for n, lb, k in entities),
        links=tuple(links),
        questions=tuple(questions),
    )
