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

_LINK_TABLES = ("has_token", "mentions", "chunk_edges", "chunk_edge_state")
_OLD_INDEXES = ("chunks_doc", "has_token_token", "mentions_entity", "chunk_edges_dst")


def schema_sql() -> str:
    return resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def needs_migration(conn: sqlite3.Connection) -> bool:
    """A format-1 file: its chunks table has no integer `key` column."""
    columns = _columns(conn, "chunks")
    return bool(columns) and "key" not in columns


def migrate(conn: sqlite3.Connection, path: str = "") -> None:
    """Format 1 → 2 (see the module docstring). `conn` is in autocommit mode."""
    log.warning("embedded store %s: migrating to format 2 (once; this may take a while)", path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for index in _OLD_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {index}")
        conn.execute("DROP INDEX IF EXISTS chunk_edges_kind")
        for table in ("chunks", *_LINK_TABLES):
            conn.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
        _create_schema(conn)
        chunk_columns = [c for c in _columns(conn, "old_chunks")]
        listed = ", ".join(chunk_columns)
        conn.execute(f"INSERT INTO chunks ({listed}) SELECT {listed} FROM old_chunks ORDER BY id")
        conn.execute(
            "INSERT INTO has_token (chunk, token_id, tf) SELECT c.key, h.token_id, h.tf "
            "FROM old_has_token h JOIN chunks c ON c.id = h.chunk_id"
        )
        conn.execute(
            "INSERT INTO mentions (chunk, entity_key, count) SELECT c.key, m.entity_key, m.count "
            "FROM old_mentions m JOIN chunks c ON c.id = m.chunk_id"
        )
        conn.execute(
            "INSERT INTO chunk_edges (src, kind, dst, weight) "
            "SELECT s.key, k.code, d.key, e.weight FROM old_chunk_edges e "
            "JOIN chunks s ON s.id = e.src JOIN chunks d ON d.id = e.dst "
            "JOIN edge_kinds k ON k.name = e.kind"
        )
        conn.execute(
            "INSERT INTO chunk_edge_state (chunk, state) SELECT c.key, s.state "
            "FROM old_chunk_edge_state s JOIN chunks c ON c.id = s.chunk_id"
        )
        for table in ("chunks", *_LINK_TABLES):
            conn.execute(f"DROP TABLE old_{table}")
        recount(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("VACUUM")


def _create_schema(conn: sqlite3.Connection) -> None:
    """The current schema's statements one by one (executescript would commit the
    migration's transaction half-way)."""
    statement = ""
    for line in schema_sql().splitlines():
        if line.startswith("--") or line.startswith("PRAGMA") or not line.strip():
            continue
        statement += line + "\n"
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""


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
