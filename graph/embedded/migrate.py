"""Bring an embedded store written by an earlier neorag forward to the current format, in
place, the first time this version opens it.

Format 1 named chunks by their text ids in every link table; format 2 (schema.sql) names
them by an integer key and keeps row counts in a table. The migration copies each link
table through the new keys inside one transaction, so a crash leaves the format-1 file
untouched and the next open migrates again; then it rebuilds the file (VACUUM) to hand
the freed pages back to the disk. Nothing is re-derived: documents, chunks, vectors, edges
and their states are carried over row for row.
"""

from __future__ import annotations

import logging
import sqlite3
from importlib import resources

log = logging.getLogger(__name__)


def schema_sql() -> str:
    return _script("schema.sql")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def needs_migration(conn: sqlite3.Connection) -> bool:
    """A format-1 file: its chunks table has no integer `key` column."""
    columns = _columns(conn, "chunks")
    return bool(columns) and "key" not in columns


def migrate(conn: sqlite3.Connection, path: str = "") -> None:
    """Format 1 → 2 (migrate_1_to_2.sql, see the module docstring). `conn` is in
    autocommit mode."""
    log.warning("embedded store %s: migrating to format 2 (once; this may take a while)", path)
    before, after = _script("migrate_1_to_2.sql").split("-- @schema")
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in (*_statements(before), *_statements(schema_sql()), *_statements(after)):
            conn.execute(statement)
        recount(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("VACUUM")


def _script(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _statements(script: str) -> list[str]:
    """A script's statements one by one (executescript would commit the migration's
    transaction half-way); PRAGMAs are left out (they cannot run inside one)."""
    out, statement = [], ""
    for line in script.splitlines():
        if line.startswith("--") or line.startswith("PRAGMA") or not line.strip():
            continue
        statement += line + "\n"
        if sqlite3.complete_statement(statement):
            out.append(statement)
            statement = ""
    return out


def recount(conn: sqlite3.Connection) -> None:
    """Set every count from the tables themselves."""
    for table in ("documents", "chunks", "tokens", "has_token", "cooccurs", "mentions"):
        conn.execute(
            f"UPDATE counts SET n = (SELECT COUNT(*) FROM {table}) WHERE name = ?", (table,)
        )
    conn.execute(
        "UPDATE counts SET n = (SELECT COUNT(*) FROM communities) WHERE name = 'communities'"
    )
    conn.execute("UPDATE counts SET n = 0 WHERE name LIKE 'edges:%'")
    conn.execute(
        "UPDATE counts SET n = (SELECT COUNT(*) FROM chunk_edges e "
        "WHERE 'edges:' || e.kind = counts.name) WHERE name LIKE 'edges:%'"
    )
