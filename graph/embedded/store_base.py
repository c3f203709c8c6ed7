"""What every part of the embedded store goes through: the SQLite connection, its write
transaction, the meta table and the graph version, and the float32 blob encoding of vectors.

The writes (store_writes.py) and the reads (store_reads.py) are mixins over this base, so
each sees the same connection and lock; `EmbeddedStore` (store.py) opens them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from graph.base import GraphStore
from graph.errors import StoreFull


def _vec(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


class _EmbeddedBase(GraphStore):
    """The connection and lock `EmbeddedStore.__init__` opens, and the plumbing on them."""

    path: Path
    _conn: sqlite3.Connection
    _lock: threading.RLock

    # ---- plumbing --------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a full disk (or file size limit) rolls it back whole and
        becomes a StoreFull naming the store, so the file keeps its state before it."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if "full" in str(exc) or "disk I/O" in str(exc):
                    raise StoreFull(
                        f"cannot write the embedded store {self.path}: {exc} (disk full or "
                        "a file size limit); free space and run the command again — the "
                        "store keeps everything written before"
                    ) from None
                raise

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def settle(self, timeout: float) -> None:
        """Nothing loads in the background: the graph is read in process."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def clear(self) -> None:
        with self._tx() as c:
            for table in (
                "documents",
                "chunks",
                "tokens",
                "has_token",
                "cooccurs",
                "entities",
                "mentions",
                "chunk_edges",
                "chunk_edge_state",
                "communities",
                "meta",
            ):
                c.execute(f"DELETE FROM {table}")

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def graph_version(self) -> int:
        return int(self.get_meta("graph_version") or 0)

    def _bump_version(self, c: sqlite3.Connection) -> int:
        row = c.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
        version = int(row[0]) + 1 if row else 1
        c.execute("INSERT OR REPLACE INTO meta VALUES ('graph_version', ?)", (str(version),))
        return version
