"""Ad-hoc Cypher as a service: the one function every adapter calls (the `neorag cypher`
command, the HTTP API, the MCP `cypher` tool). It prints nothing; it returns typed rows or
raises a NeoragError whose message is one line.

Read-only unless `write=True`, in two layers: the guard (app/cypher_guard.py) vets the
statement's EXPLAIN plan before anything runs, then the statement runs in a READ transaction,
where the server refuses any write, and that transaction is rolled back. Vetting and running
share one transaction and its server-side timeout; at most `max_rows` rows are fetched. Values
reach the server only as parameters; the statement text is never assembled from them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from neo4j import READ_ACCESS, WRITE_ACCESS, Driver
from neo4j.exceptions import Neo4jError
from neo4j.graph import Node, Path, Relationship

from app.cypher_guard import vet
from app.settings import Settings
from graph.config import Neo4jConfig
from graph.errors import (
    CypherNotSupported,
    NeoragError,
    ParameterMissing,
    StatementTimeout,
    WriteRefused,
)

_COUNTERS = (
    "nodes_created",
    "nodes_deleted",
    "relationships_created",
    "relationships_deleted",
    "properties_set",
    "labels_added",
    "labels_removed",
    "indexes_added",
    "indexes_removed",
    "constraints_added",
    "constraints_removed",
)
SERVER_REFUSED_WRITE = "the server refused a write in a read-only transaction"


@dataclass(slots=True)
class CypherResult:
    keys: list[str]
    rows: list[dict[str, Any]]
    truncated: bool = False
    counters: dict[str, int] = field(default_factory=dict)


def plain(value: Any) -> Any:
    """A driver value as JSON-ready data: graph elements keep their labels or type, which
    `Record.data()` would drop; temporal and spatial values become strings and lists."""
    if isinstance(value, Node):
        return {
            "element_id": value.element_id,
            "labels": sorted(value.labels),
            "properties": {k: plain(v) for k, v in value.items()},
        }
    if isinstance(value, Relationship):
        return {
            "element_id": value.element_id,
            "type": value.type,
            "start": value.start_node.element_id if value.start_node else None,
            "end": value.end_node.element_id if value.end_node else None,
            "properties": {k: plain(v) for k, v in value.items()},
        }
    if isinstance(value, Path):
        return {
            "nodes": [plain(n) for n in value.nodes],
            "relationships": [plain(r) for r in value.relationships],
        }
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if hasattr(value, "srid"):  # neo4j.spatial points are tuples with an srid
            return list(value)
        return [plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    iso = getattr(value, "iso_format", None) or getattr(value, "isoformat", None)
    return iso() if callable(iso) else str(value)


def _translate(exc: Neo4jError, cfg: Neo4jConfig, timeout: float) -> NeoragError:
    from graph.neo4j.connection import translate

    code = exc.code or ""
    first_line = (exc.message or "").strip().splitlines()[0] if exc.message else code
    if code == "Neo.ClientError.Statement.AccessMode":
        return WriteRefused(SERVER_REFUSED_WRITE)
    if "TransactionTimedOut" in code:
        return StatementTimeout(
            f"the statement did not finish within {timeout:g}s; narrow it or raise the timeout",
            timeout,
        )
    if code == "Neo.ClientError.Statement.ParameterMissing":
        return ParameterMissing(first_line)
    if code == "Neo.ClientError.Procedure.ProcedureNotFound":
        named = re.search(r"name `([^`]+)`", first_line)
        return NeoragError(f"Neo4j at {cfg.uri} has no procedure {named[1] if named else '?'}")
    if code.startswith("Neo.ClientError.Statement."):
        return NeoragError(f"Cypher {code.rsplit('.', 1)[-1]}: {first_line}")
    error = translate(exc, cfg)
    return type(error)(str(error).splitlines()[0])


def _check_bounds(statement: str, timeout_seconds: float, max_rows: int) -> None:
    if not statement.strip():
        raise NeoragError("the Cypher statement is empty")
    if timeout_seconds <= 0:
        raise NeoragError(f"the timeout must be more than 0 seconds (got {timeout_seconds:g})")
    if max_rows < 1:
        raise NeoragError(f"the row cap must be at least 1 (got {max_rows})")


def execute(
    driver: Driver,
    cfg: Neo4jConfig,
    statement: str,
    params: Mapping[str, Any],
    *,
    write: bool,
    timeout_seconds: float,
    max_rows: int,
) -> CypherResult:
    """One statement on an open driver (adapters that keep a driver call this): vetted and
    run read-only unless `write`, stopped by the server after `timeout_seconds`, at most
    `max_rows` rows kept (`truncated` says more were there)."""
    from graph.neo4j.connection import translate

    _check_bounds(statement, timeout_seconds, max_rows)
    try:
        with (
            driver.session(
                database=cfg.database,
                default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
                fetch_size=min(max_rows + 1, 1000),
            ) as session,
            session.begin_transaction(timeout=timeout_seconds) as tx,
        ):
            if not write:
                vet(tx, statement, params, database=cfg.database)
            result = tx.run(cast(Any, statement), dict(params))
            keys = list(result.keys())
            records = []
            truncated = False
            for record in result:
                if len(records) == max_rows:
                    truncated = True
                    break
                records.append(record)
            counters: dict[str, int] = {}
            if write:
                summary = result.consume()  # a write completes even past the row cap
                tx.commit()
                counters = {n: c for n in _COUNTERS if (c := getattr(summary.counters, n, 0))}
            else:
                if not truncated:
                    result.consume()  # errors raised after the last row surface here
                tx.rollback()
    except Neo4jError as exc:
        raise _translate(exc, cfg, timeout_seconds) from None
    except NeoragError:
        raise
    except Exception as exc:
        raise translate(exc, cfg) from None
    rows = [{k: plain(v) for k, v in zip(keys, record.values(), strict=True)} for record in records]
    return CypherResult(keys, rows, truncated, counters)


def run_cypher(
    settings: Settings,
    statement: str,
    params: Mapping[str, Any] | None = None,
    *,
    write: bool = False,
    timeout_seconds: float | None = None,
    max_rows: int | None = None,
) -> CypherResult:
    """Connect with `settings`, run one statement (see `execute`), close. The timeout and
    the row cap default to `settings.cypher`."""
    from graph.neo4j.connection import connect

    if settings.backend != "neo4j":
        raise CypherNotSupported(
            "ad-hoc Cypher needs the Neo4j backend: set NEORAG_BACKEND=neo4j and start Neo4j "
            "(`make neo4j-start`)"
        )
    seconds = settings.cypher.timeout_seconds if timeout_seconds is None else timeout_seconds
    rows = settings.cypher.max_rows if max_rows is None else max_rows
    _check_bounds(statement, seconds, rows)
    driver, _ = connect(settings.neo4j)
    try:
        return execute(
            driver,
            settings.neo4j,
            statement,
            params or {},
            write=write,
            timeout_seconds=seconds,
            max_rows=rows,
        )
    finally:
        driver.close()
