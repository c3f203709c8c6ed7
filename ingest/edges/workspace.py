"""A local copy of the edge corpus as of the last edge build, so an update reads from the store
only the chunks of the documents that changed.

Without it, every update reads every chunk's facts back from the store (text, entities,
questions, embedding) and every chunk's edge state: on Neo4j that read grows with the corpus
and dominates a one-document change (the server reads each chunk's float array).

The copy is one SQLite file beside the search indexes (`indexes/edge-corpus.sqlite`): a row
per chunk (its facts as the store returned them, its embedding's quantised unit row as
SEMANTIC scores it, its question-term counts) and the `EdgeState` text of the build it
belongs to. Keeping the quantised row rather than the raw embedding also spares an update
quantising the whole corpus again. An update uses it only when that
text equals the store's current one; the store's state moves in the same transaction as the
edges, so a copy left behind by a crash, a copy of another store, or a damaged file is never
used: the update reads the store as before, and the copy is rewritten after the refresh. The
store stays the only source of truth; deleting the file costs one full read.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from graph.types import ChunkRecord, EntityMention
from ingest.edges.corpus import EdgeCorpus
from ingest.edges.vectors import SCALE

log = logging.getLogger(__name__)

FILE_NAME = "edge-corpus.sqlite"
_FORMAT = "3"


@dataclass(slots=True)
class CachedCorpus:
    """The chunks outside the changed documents, the question-term counts of those that have
    questions and the quantised unit rows of those that have an embedding. A cached chunk's
    `embedding` is the unit vector its row stands for, not the stored vector: the edge
    builders read only its row."""

    chunks: list[ChunkRecord]
    terms: dict[str, dict[str, int]]
    units: dict[str, np.ndarray]


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
                cached = CachedCorpus([], {}, {})
                for row in db.execute("SELECT * FROM chunks"):
                    cid, doc_id, blob, counts = row[0], row[1], row[6], row[7]
                    if doc_id in changed:
                        continue
                    unit = None if blob is None else np.frombuffer(blob, dtype=np.int32)
                    cached.chunks.append(_record(row, unit))
                    if unit is not None:
                        cached.units[cid] = unit
                    if counts is not None:
                        cached.terms[cid] = json.loads(counts)
        except (sqlite3.Error, ValueError, TypeError, KeyError) as exc:
            log.warning(
                "edge workspace %s unreadable (%s); reading the store instead", self.path, exc
            )
            return None
        return cached

    def replace(self, corpus: EdgeCorpus, stamp: str) -> None:
        """Make the copy the whole `corpus`, of the build `stamp` describes: a new file,
        renamed into place."""
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            with closing(sqlite3.connect(tmp)) as db, db:
                db.executescript(_schema())
                self._insert(db, corpus, corpus.chunks, stamp)
            os.replace(tmp, self.path)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            tmp.unlink(missing_ok=True)

    def update(self, corpus: EdgeCorpus, changed_docs: Iterable[str], stamp: str) -> None:
        """Replace the rows of `changed_docs` with their chunks in `corpus`, in one SQLite
        transaction: a crash leaves the old copy with its old stamp."""
        docs = sorted(set(changed_docs))
        try:
            with closing(sqlite3.connect(self.path)) as db, db:
                for start in range(0, len(docs), 500):
                    part = docs[start : start + 500]
                    marks = ",".join("?" * len(part))
                    db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", part)
                self._insert(db, corpus, corpus.chunks_of(docs), stamp)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)

    @staticmethod
    def _insert(
        db: sqlite3.Connection, corpus: EdgeCorpus, chunks: list[ChunkRecord], stamp: str
    ) -> None:
        units = corpus.units
        db.executemany(
            "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (_row(c, units.get(c.id), corpus.terms.get(c.id)) for c in chunks),
        )
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("format", _FORMAT), ("state", stamp)]
        )

    def _failed(self, exc: Exception) -> None:
        """A copy that could not be written only costs the next update a full read."""
        log.warning("edge workspace %s not written (%s)", self.path, exc)
        self.path.unlink(missing_ok=True)


def _schema() -> str:
    return resources.files(__package__).joinpath("workspace.sql").read_text(encoding="utf-8")


def _row(c: ChunkRecord, unit: np.ndarray | None, terms: dict[str, int] | None) -> tuple:
    facts = [
        list(c.section_path),
        c.n_tokens,
        list(c.links),
        list(c.questions),
        [[e.name, e.label, e.count] for e in c.entities],
    ]
    return (
        c.id,
        c.doc_id,
        c.ordinal,
        c.title,
        c.text,
        json.dumps(facts, separators=(",", ":")),
        None if unit is None else np.ascontiguousarray(unit, dtype=np.int32).tobytes(),
        None if terms is None else json.dumps(dict(sorted(terms.items())), separators=(",", ":")),
    )


def _record(row: tuple, unit: np.ndarray | None) -> ChunkRecord:
    cid, doc_id, ordinal, title, text, facts = row[:6]
    section_path, n_tokens, links, questions, entities = json.loads(facts)
    return ChunkRecord(
        id=cid,
        doc_id=doc_id,
        ordinal=ordinal,
        title=title,
        text=text,
        section_path=tuple(section_path),
        n_tokens=n_tokens,
        embedding=None if unit is None else unit.astype(np.float32) / np.float32(SCALE),
        entities=tuple(EntityMention(n, lb, k) for n, lb, k in entities),
        links=tuple(links),
        questions=tuple(questions),
    )
