"""What every part of the Neo4j store goes through: running its named cypher/ statements
(a routed read, a write, on the GDS member, inside one transaction, batched with UNWIND),
the schema before a write, and the meta and version counters.

The writes (store_writes.py) and the reads (store_reads.py) are mixins over this base;
`Neo4jStore` (store.py) opens the drivers they use.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from neo4j import Driver, ManagedTransaction, Result, RoutingControl
from neo4j.exceptions import Neo4jError

import cypher
from graph.base import GraphStore
from graph.config import Neo4jConfig
from graph.kept import STORE_ID
from graph.neo4j.connection import translate
from graph.titles import folded_title_key


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


GRAPH_VERSION, CONTENT_VERSION = "graph_version", "content_version"
TITLE_KEYS = "title_keys"  # set once the documents carry their title keys
_AUTO_COMMIT_RETRY_SECONDS = 30.0
# Two writers that open a fresh database at once both run `CREATE … IF NOT EXISTS`; the
# second one's check can pass before the first commits, and Neo4j then reports the rule
# as already there, which is what the statement asked for.
_CONCURRENT_SCHEMA = frozenset(
    {
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        "Neo.ClientError.Schema.IndexAlreadyExists",
        "Neo.ClientError.Schema.ConstraintAlreadyExists",
    }
)


def _batches(rows: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


class _Neo4jBase(GraphStore):
    """The drivers and schema state `Neo4jStore.__init__` sets up, and the plumbing on them."""

    cfg: Neo4jConfig
    driver: Driver
    gds_driver: Driver
    _schema_ready: bool
    _vector_dimension: int | None

    # ---- plumbing --------------------------------------------------------------------
    def read(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named cypher/ file in a read transaction (`$collection` is this store's).
        Rows are plain dicts of the returned values: every named query returns properties
        and aggregates, never nodes, so `Record.data()`'s deep copy (5 of 6.5 s reading
        10k chunks with their embeddings) is not needed."""
        try:
            records, _, _ = self.driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
                routing_=RoutingControl.READ,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [dict(r) for r in records]

    def write(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        try:
            records, _, _ = self.driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [r.data() for r in records]

    def gds_query(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named cypher/ file on the GDS member: every statement that touches the
        graph catalog (project, list, drop) or runs an algorithm on a projection.
        Projections live in the memory of the member that made them, so all of these go to
        one member (the writer NEO4J_URI routes to, or NEO4J_GDS_URI's), never to whichever
        reader a routed read would pick."""
        try:
            records, _, _ = self.gds_driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
                routing_=RoutingControl.WRITE,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [r.data() for r in records]

    def transaction(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        return self._in_session(work, write=True)

    def read_transaction(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Several reads in one read transaction, on one member (a routed read)."""
        return self._in_session(work, write=False)

    def _in_session(self, work: Callable[[ManagedTransaction], Any], *, write: bool) -> Any:
        try:
            with self.driver.session(database=self.cfg.database) as session:
                run = session.execute_write if write else session.execute_read
                return run(work)
        except Exception as exc:
            raise translate(exc, self.cfg) from None

    def run_in(self, tx: ManagedTransaction, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """The rows of the named cypher/ file, run inside `tx`."""
        return [r.data() for r in self._run(tx, name, **params)]

    def content_version_in(self, tx: ManagedTransaction) -> int:
        rows = self.run_in(tx, "meta_get", key=CONTENT_VERSION)
        return int(rows[0]["value"]) if rows else 0

    def _run(self, tx: ManagedTransaction, name: str, /, **params: Any) -> Result:
        """Run the named cypher/ file inside `tx`, with this store's `$collection`."""
        return tx.run(cypher.load(name), {"collection": self.collection, **params})

    def _unwind(
        self, tx: ManagedTransaction, name: str, key: str, rows: Sequence[Any], **extra: Any
    ) -> None:
        for part in _batches(rows, self.cfg.write_batch_size):
            self._run(tx, name, **{key: list(part), **extra}).consume()

    def ensure_schema(self, dimension: int | None = None) -> None:
        """Constraints and indexes, and this collection's registration, before a write."""
        if not self._schema_ready:
            for statement in cypher.statements("schema"):
                self.write_raw(statement, tolerate=_CONCURRENT_SCHEMA)
            self.write("meta_set_if_absent", key="created_at", value=_now())
            # What copies kept outside the database check they belong to (graph/kept.py):
            # a collection deleted and made again gets a new one.
            self.write("meta_set_if_absent", key=STORE_ID, value=uuid.uuid4().hex)
            self._store_title_keys()
            self._schema_ready = True
        if dimension and dimension != self._vector_dimension:
            self._follow_vector_index(dimension)
            self._vector_dimension = dimension

    def _store_title_keys(self) -> None:
        """Once per collection: the title keys of documents an older neorag wrote without
        them (database serving links question phrases to titles through them)."""
        if self.get_meta(TITLE_KEYS) is not None:
            return
        rows = [
            {"id": r["id"], "key": folded_title_key(r["title"] or "")}
            for r in self.read("documents_without_title_key")
        ]
        for part in _batches(rows, self.cfg.write_batch_size):
            self.write("set_title_keys", rows=list(part))
        self.write("meta_set", key=TITLE_KEYS, value="1")

    def _follow_vector_index(self, dimension: int) -> None:
        """The database has one `chunk_embedding` vector index (for Browser and ad-hoc
        Cypher; retrieval does not read it). It takes this collection's dimension unless
        another collection's chunks are indexed with the one it has, which it keeps."""
        current = self.read("vector_index_dimension")
        if current and current[0]["dimension"] != dimension:
            held = current[0]["dimension"]
            if self.read("vector_index_used_elsewhere", dimension=held):
                return
            self.write("drop_vector_index")
        self.write_raw(
            cypher.load("vector_index"), {"dimension": dimension}, tolerate=_CONCURRENT_SCHEMA
        )

    def write_raw(
        self,
        statement: str,
        params: dict[str, Any] | None = None,
        tolerate: frozenset[str] = frozenset(),
    ) -> None:
        """Run one statement as is; a Neo4j error whose code is in `tolerate` means the
        statement's effect is already there."""
        try:
            self.driver.execute_query(statement, params or {}, database_=self.cfg.database)
        except Neo4jError as exc:
            if exc.code not in tolerate:
                raise translate(exc, self.cfg) from None
        except Exception as exc:
            raise translate(exc, self.cfg) from None

    def _auto_commit(self, name: str) -> None:
        """Statements with CALL … IN TRANSACTIONS need an auto-commit transaction, which
        the driver does not retry; these statements are idempotent batch deletes, so a
        transient failure (a deadlock with another collection's writer, a leader switch)
        is retried here with backoff, for up to as long as a managed transaction would."""
        deadline, pause = time.monotonic() + _AUTO_COMMIT_RETRY_SECONDS, 0.2
        while True:
            try:
                with self.driver.session(database=self.cfg.database) as session:
                    session.run(cypher.load(name), {"collection": self.collection}).consume()
                return
            except Neo4jError as exc:
                if not exc.is_retryable() or time.monotonic() + pause > deadline:
                    raise translate(exc, self.cfg) from None
            except Exception as exc:
                raise translate(exc, self.cfg) from None
            time.sleep(pause)
            pause = min(pause * 2, 5.0)

    def get_meta(self, key: str) -> str | None:
        rows = self.read("meta_get", key=key)
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.ensure_schema()
        self.write("meta_set", key=key, value=value)

    def graph_version(self) -> int:
        return int(self.get_meta(GRAPH_VERSION) or 0)

    def content_version(self) -> int:
        return int(self.get_meta(CONTENT_VERSION) or 0)
