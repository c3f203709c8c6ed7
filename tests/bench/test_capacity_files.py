"""`python -m bench capacity --files` accounts for every byte of a collection's folder: its files by
size, and inside each SQLite file the pages of each table and index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.suites.capacity import measure


def test_every_page_of_a_sqlite_file_is_named(tmp_path: Path) -> None:
    db = tmp_path / "graph.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE chunks (id TEXT PRIMARY KEY, text TEXT)")
    con.execute("CREATE INDEX chunks_text ON chunks (text)")
    con.executemany("INSERT INTO chunks VALUES (?, ?)", [(f"c{i}", "x" * 500) for i in range(400)])
    con.commit()
    con.close()
    (tmp_path / "indexes").mkdir()
    (tmp_path / "indexes" / "seg.bin").write_bytes(b"\0" * 1000)

    found = measure(tmp_path, chunks=400)
    assert found["total_bytes"] == db.stat().st_size + 1000
    first, second = found["files"]
    assert first["path"] == "graph.sqlite" and second["path"] == "indexes/seg.bin"
    objects = {o["name"]: o for o in first["objects"]}
    assert objects["chunks"]["type"] == "table" and objects["chunks_text"]["type"] == "index"
    assert sum(o["bytes"] for o in first["objects"]) == first["bytes"]  # every page named
    assert objects["chunks"]["bytes"] > 400 * 500
    assert found["bytes_per_chunk"] == round(found["total_bytes"] / 400, 1)
