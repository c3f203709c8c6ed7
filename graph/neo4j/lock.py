"""A writer lock held in the database: ingests into one collection are serialised even when
they run on different machines or with different data dirs (a file lock cannot see those).

The lock is the write lock on the collection's `NeoragLock` node, taken by a transaction
that stays open for the whole ingest and is never committed. A second writer first probes
with a short-lived transaction: if that cannot take the node's lock within `wait_seconds`,
the server terminates it and the writer is told another ingest is running. Because the
lock lives in an open transaction, a writer that dies (SIGKILL, lost connection) frees it at
once, so a re-run after a crash never waits for an expiry.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from neo4j import Session, Transaction
from neo4j.exceptions import ClientError, TransientError

import cypher
from graph.errors import LockedError
from graph.neo4j.connection import translate

if TYPE_CHECKING:
    from graph.neo4j.store import Neo4jStore


class DatabaseLock:
    def __init__(self, store: Neo4jStore, wait_seconds: float = 2.0) -> None:
        self.store = store
        self.wait_seconds = wait_seconds
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._session: Session | None = None
        self._tx: Transaction | None = None

    def _params(self) -> dict[str, str]:
        return {"collection": self.store.collection, "owner": self.owner}

    def acquire(self) -> None:
        self.store.ensure_schema()
        self.store.write("ingest_lock_ensure")
        driver, database = self.store.driver, self.store.cfg.database
        try:
            with driver.session(database=database) as probe:
                tx = probe.begin_transaction(timeout=self.wait_seconds)
                try:
                    tx.run(cypher.load("ingest_lock_take"), self._params()).consume()
                finally:
                    tx.rollback()
        except (ClientError, TransientError) as exc:
            if "terminated" in str(exc).lower() or "timed out" in str(exc).lower():
                raise LockedError(
                    f"another ingest into collection {self.store.collection!r} is running "
                    f"on Neo4j at {self.store.cfg.uri}; wait for it to finish"
                ) from None
            raise translate(exc, self.store.cfg) from None
        except Exception as exc:
            raise translate(exc, self.store.cfg) from None
        try:
            self._session = driver.session(database=database)
            self._tx = self._session.begin_transaction()
            self._tx.run(cypher.load("ingest_lock_take"), self._params()).consume()
        except Exception as exc:
            self.release()
            raise translate(exc, self.store.cfg) from None

    def release(self) -> None:
        try:
            if self._tx is not None:
                self._tx.rollback()
        except Exception:  # the server or connection went away: the lock went with it
            pass
        finally:
            if self._session is not None:
                self._session.close()
            self._tx = self._session = None

    def __enter__(self) -> DatabaseLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
