"""`neorag cypher`: the command-line adapter over app/cypher_service.py.

Parsing `--param name=value` and printing rows (a table, or JSON on stdout) live here; what
may run and how is the service's business, shared with the HTTP API and the MCP tool, so the
same statement is refused or bounded the same way everywhere. This adapter only adds the CLI
flag to each one-line error (`--write`, `--timeout`, `--param`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from app.cypher_service import CypherResult, run_cypher
from app.settings import Settings
from graph.errors import NeoragError, ParameterMissing, StatementTimeout, WriteRefused

_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
WRITE_HINT = "re-run with --write if you mean it"
MAX_CELL = 120


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
    max_rows: int | None,
    out: Console,
    err: Console,
) -> None:
    if statement == "-":
        statement = sys.stdin.read()
    params = parse_params(param_items)
    try:
        result = run_cypher(
            settings, statement, params, write=write, timeout_seconds=timeout, max_rows=max_rows
        )
    except WriteRefused as exc:
        raise type(exc)(f"{exc}; {WRITE_HINT}") from None
    except StatementTimeout as exc:
        raise StatementTimeout(
            f"the statement did not finish within {exc.seconds:g}s; narrow it or raise --timeout",
            exc.seconds,
        ) from None
    except ParameterMissing as exc:
        raise ParameterMissing(f"{exc}; pass it with --param name=value") from None
    print_result(result, json_out, out, err)
