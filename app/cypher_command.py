"""`neorag cypher`: ad-hoc Cypher against the Neo4j backend, read-only unless `--write`.

Read-only is enforced by the server, not guessed from the text: the statement runs in a
READ transaction, and Neo4j refuses any write there (`Neo.ClientError.Statement.AccessMode`),
whatever procedure or subquery it hides in. That refusal becomes a one-line message. Values
reach the server only as parameters; the statement text is never assembled from them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from neo4j import Query, Result, RoutingControl
from neo4j.exceptions import Neo4jError
from neo4j.graph import Node, Path, Relationship
from rich.console import Console
from rich.table import Table

from app.settings import Settings
from graph.config import Neo4jConfig
from graph.errors import CypherNotSupported, NeoragError, WriteRefused

_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
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
WRITE_REFUSED = "this statement writes; re-run with --write if you mean it"
MAX_CELL = 120


@dataclass(slots=True)
class CypherResult:
    keys: list[str]
    rows: list[dict[str, Any]]
    truncated: bool = False
    counters: dict[str, int] = field(default_factory=dict)


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """`name=value` pairs; a value is JSON when it parses as JSON (42, true, [1, 2],
    "quoted"), otherwise the literal string, so `--param doc_id=guide/ingest.md` works
    without shell-quoted JSON."""
    params: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not _PARAM_NAME.match(name):
            raise NeoragError(f"cannot read --param {item!r}; write it as name=value")
        if name in params:
            raise NeoragError(f"--param {name} is given twice")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    return params


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


def _take(max_rows: int) -> Callable[[Result], tuple[list[str], list[Any], Any, bool]]:
    """Keep at most `max_rows` records; `consume()` lets the server finish the statement
    (a write still completes) and returns the summary with its update counters."""

    def transform(result: Result) -> tuple[list[str], list[Any], Any, bool]:
        keys = list(result.keys())
        records = []
        truncated = False
        for record in result:
            if len(records) == max_rows:
                truncated = True
                break
            records.append(record)
        return keys, records, result.consume(), truncated

    return transform


def _translate(exc: Neo4jError, cfg: Neo4jConfig, timeout: float) -> NeoragError:
    from graph.neo4j.connection import translate

    code = exc.code or ""
    first_line = (exc.message or "").strip().splitlines()[0] if exc.message else code
    if code == "Neo.ClientError.Statement.AccessMode":
        return WriteRefused(WRITE_REFUSED)
    if "TransactionTimedOut" in code:
        return NeoragError(
            f"the statement did not finish within {timeout:g}s; narrow it or raise --timeout"
        )
    if code == "Neo.ClientError.Statement.ParameterMissing":
        return NeoragError(f"{first_line}; pass it with --param name=value")
    if code.startswith("Neo.ClientError.Statement."):
        return NeoragError(f"Cypher {code.rsplit('.', 1)[-1]}: {first_line}")
    error = translate(exc, cfg)
    return type(error)(str(error).splitlines()[0])


def run_cypher(
    cfg: Neo4jConfig,
    statement: str,
    params: dict[str, Any],
    *,
    write: bool = False,
    timeout: float | None = None,
    max_rows: int = 1000,
) -> CypherResult:
    """Run one statement in a READ transaction (WRITE with `write=True`) with a server-side
    timeout, keeping at most `max_rows` rows."""
    from graph.neo4j.connection import connect, translate

    if not statement.strip():
        raise NeoragError("the Cypher statement is empty")
    seconds = timeout if timeout is not None else cfg.query_timeout
    if seconds <= 0:
        raise NeoragError("--timeout must be more than 0 seconds")
    driver, _ = connect(cfg)
    try:
        keys, records, summary, truncated = driver.execute_query(
            Query(cast(Any, statement), timeout=seconds),
            params,
            routing_=RoutingControl.WRITE if write else RoutingControl.READ,
            database_=cfg.database,
            result_transformer_=_take(max_rows),
        )
    except Neo4jError as exc:
        raise _translate(exc, cfg, seconds) from None
    except Exception as exc:
        raise translate(exc, cfg) from None
    finally:
        driver.close()
    counters = {name: n for name in _COUNTERS if (n := getattr(summary.counters, name, 0))}
    rows = [{k: plain(v) for k, v in zip(keys, record.values(), strict=True)} for record in records]
    return CypherResult(keys, rows, truncated, counters)


def _cell(value: Any) -> str:
    if value is None:
        return "null"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def print_result(result: CypherResult, json_out: bool, out: Console, err: Console) -> None:
    """Rows as JSON on stdout (notes on stderr, so the JSON stays parseable), or a table."""
    note = f"{len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    if result.truncated:
        note += f" (stopped at {len(result.rows)}; add LIMIT or raise --max-rows)"
    if result.counters:
        note += "; " + ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in result.counters.items())
    if json_out:
        print(json.dumps(result.rows, indent=2, ensure_ascii=False))
        err.print(note, highlight=False, soft_wrap=True)
        return
    if result.keys:
        table = Table(show_header=True)
        for key in result.keys:
            table.add_column(key, overflow="fold")
        for row in result.rows:
            table.add_row(*(_cell(row[k]) for k in result.keys))
        out.print(table)
    out.print(note, highlight=False, soft_wrap=True)


def run_cypher_command(
    settings: Settings,
    statement: str,
    param_items: Sequence[str],
    *,
    write: bool,
    json_out: bool,
    timeout: float | None,
    max_rows: int,
    out: Console,
    err: Console,
) -> None:
    if settings.backend != "neo4j":
        raise CypherNotSupported(
            "ad-hoc Cypher needs the Neo4j backend: set NEORAG_BACKEND=neo4j (or pass "
            "--backend neo4j) and start Neo4j with `make neo4j-start`"
        )
    if statement == "-":
        statement = sys.stdin.read()
    params = parse_params(param_items)
    result = run_cypher(
        settings.neo4j, statement, params, write=write, timeout=timeout, max_rows=max_rows
    )
    print_result(result, json_out, out, err)
