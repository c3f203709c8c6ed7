"""The edge workspace: what an incremental edge update needs that neither the store nor the
search files index, kept beside the search indexes (`indexes/edge-links.sqlite`).

That is the link index: each chunk's links as the names a document may be linked by
(`ingest/edges/links.py`), so the chunks linking to a changed document are found by lookup
instead of reading every chunk's links (ingest/edges/indexed.py reads the rest of the
corpus through the store and the search files). The file is stamped with the `EdgeState`
text of the build it belongs to; the store's state moves in the same transaction as the
edges, so a copy left behind by a crash, a copy of another store, or a damaged file is never
used: the update then reads the whole corpus from the store, and the file is rewritten. The
store stays the only source of truth; deleting the file costs one full read.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from importlib import resources
from pathlib import Path

from graph.types import ChunkRecord
from ingest.edges.links import link_options

log = logging.getLogger(__name__)

FILE_NAME = "edge-links.sqlite"
_OLD_FILES = ("edge-corpus.sqlite",)  # what earlier versions kept here
_FORMAT = "4"


class EdgeWorkspace:
    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def link_options(chunk: ChunkRecord) -> set[str]:
        return link_options(chunk.links)

    def current(self, stamp: str | None) -> bool:
        """Whether the file is the workspace of the build `stamp` describes."""
        if not stamp or not self.path.exists():
            return False
        try:
            with closing(sqlite3.connect(self.path)) as db:
                meta = dict(db.execute("SELECT key, value FROM meta"))
        except sqlite3.Error as exc:
            log.warning("edge workspace %s unreadable (%s); reading the store", self.path, exc)
            return False
        return meta.get("format") == _FORMAT and meta.get("state") == stamp

    def linking(self, options: Iterable[str]) -> set[str]:
        """The chunks with a link that may name one of `options`."""
        wanted = sorted(set(options))
        found: set[str] = set()
        with closing(sqlite3.connect(self.path)) as db:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(
                    r[0]
                    for r in db.execute(f"SELECT chunk FROM links WHERE option IN ({marks})", part)
                )
        return found

    def replace(self, chunks: Iterable[ChunkRecord], stamp: str) -> None:
        """Make the file the link index of `chunks` (the whole corpus) for the build `stamp`
        describes: a new file, renamed into place."""
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            with closing(sqlite3.connect(tmp)) as db, db:
                db.executescript(_schema())
                self._insert(db, chunks, stamp)
            os.replace(tmp, self.path)
            for name in _OLD_FILES:
                (self.path.parent / name).unlink(missing_ok=True)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)
            tmp.unlink(missing_ok=True)

    def update(self, removed: Iterable[str], added: Iterable[ChunkRecord], stamp: str) -> None:
        """Drop the links of the `removed` chunk ids, add those of the `added` chunks, in one
        SQLite transaction: a crash leaves the old file with its old stamp."""
        gone = sorted(set(removed))
        try:
            with closing(sqlite3.connect(self.path)) as db, db:
                db.executemany("DELETE FROM links WHERE chunk = ?", [(c,) for c in gone])
                self._insert(db, added, stamp)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc)

    @staticmethod
    def _insert(db: sqlite3.Connection, chunks: Iterable[ChunkRecord], stamp: str) -> None:
        db.executemany(
            "INSERT OR IGNORE INTO links VALUES (?, ?)",
            ((o, c.id) for c in chunks for o in sorted(link_options(c.links))),
        )
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("format", _FORMAT), ("state", stamp)]
        )

    def _failed(self, exc: Exception) -> None:
        """A file that could not be written only costs the next update a full read."""
        log.warning("edge workspace %s not written (%s)", self.path, exc)
        self.path.unlink(missing_ok=True)


def _schema() -> str:
    return resources.files(__package__).joinpath("workspace.sql").read_text(encoding="utf-8")
