"""An embedded store written by an earlier neorag (format 1: chunks named by their text ids
in every link table) is brought forward in place when this version opens it: the same
graph, row for row, and the counts a status read returns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from graph.embedded.store import EmbeddedStore
from graph.types import ChunkEdge, GraphDelta

V1 = Path(__file__).with_name("schema_v1.sql")


def _format_1(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(V1.read_text())
    db.executemany(
        "INSERT INTO documents VALUES (?, ?, ?, ?, ?)",
        [("c:a", "/a", "A", "h1", 1.0), ("c:b", "/b", "B", "h2", 2.0)],
    )
    vector = np.ones(3, dtype=np.float32).tobytes()
    db.executemany(
        "INSERT INTO chunks (id, doc_id, ordinal, title, text, section_path, n_tokens, tokens, "
        "embedding, links, questions) VALUES (?, ?, ?, ?, ?, '[]', 2, ?, ?, '[]', '[]')",
        [
            ("c:b#0-x", "c:b", 0, "B", "kell river", "kell river", vector),
            ("c:a#0-y", "c:a", 0, "A", "kell sea", "kell sea", vector),
            ("c:a#1-z", "c:a", 1, "A", "sea", "sea", None),
        ],
    )
    db.executemany(
        "INSERT INTO tokens VALUES (?, ?, ?)", [(1, "kell", 2), (2, "river", 1), (3, "sea", 2)]
    )
    db.executemany(
        "INSERT INTO has_token VALUES (?, ?, ?)",
        [
            ("c:b#0-x", 1, 1),
            ("c:b#0-x", 2, 1),
            ("c:a#0-y", 1, 1),
            ("c:a#0-y", 3, 1),
            ("c:a#1-z", 3, 1),
        ],
    )
    db.executemany("INSERT INTO cooccurs VALUES (?, ?, ?)", [(1, 2, 1), (1, 3, 1)])
    db.execute("INSERT INTO entities VALUES ('kell|LOC', 'Kell', 'LOC')")
    db.executemany("INSERT INTO mentions VALUES (?, 'kell|LOC', 1)", [("c:b#0-x",), ("c:a#0-y",)])
    db.executemany(
        "INSERT INTO chunk_edges VALUES (?, ?, ?, ?)",
        [
            ("NEXT", "c:a#0-y", "c:a#1-z", 1.0),
            ("SHARES_ENTITY", "c:a#0-y", "c:b#0-x", 0.5),
            ("RELATED", "c:a#0-y", "c:b#0-x", 0.25),
        ],
    )
    db.execute("INSERT INTO chunk_edge_state VALUES ('c:a#0-y', '{\"k\": 1}')")
    db.execute("INSERT INTO meta VALUES ('graph_version', '7')")
    db.commit()
    db.close()


def test_a_format_1_store_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "graph.sqlite"
    _format_1(path)
    store = EmbeddedStore(path, "c")
    try:
        snap = store.snapshot()
        assert snap.chunks == {"c:a#0-y": ("c:a", 0), "c:a#1-z": ("c:a", 1), "c:b#0-x": ("c:b", 0)}
        assert snap.has_token[("c:b#0-x", "river")] == 1 and len(snap.has_token) == 5
        assert snap.mentions == {("c:b#0-x", "kell|LOC"): 1, ("c:a#0-y", "kell|LOC"): 1}
        assert snap.chunk_edges == {
            ("NEXT", "c:a#0-y", "c:a#1-z"): 1.0,
            ("SHARES_ENTITY", "c:a#0-y", "c:b#0-x"): 0.5,
            ("RELATED", "c:a#0-y", "c:b#0-x"): 0.25,
        }
        assert store.chunk_edge_states(["c:a#0-y", "c:b#0-x"]) == {"c:a#0-y": '{"k": 1}'}
        assert store.related_edges() == [ChunkEdge("RELATED", "c:a#0-y", "c:b#0-x", 0.25)]
        status = store.status()
        assert (status.documents, status.chunks, status.tokens) == (2, 3, 3)
        assert status.edges["NEXT"] == 1 and status.edges["RELATED"] == 1
        assert status.edges["HAS_TOKEN"] == 5 and status.edges["CO_OCCURS"] == 2
        assert status.graph_version == 7
        # It keeps working as a store: removing a document removes its links and counts.
        store.apply(GraphDelta(remove_doc_ids=["c:a"]))
        after = store.status()
        assert (after.documents, after.chunks) == (1, 2 - 1)
        assert after.edges["NEXT"] == after.edges["RELATED"] == 0
        assert after.edges["HAS_TOKEN"] == 2 and after.edges["MENTIONS"] == 1
        assert store.neighbours(["c:b#0-x"]) == []
    finally:
        store.close()
    columns = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(chunk_edges)")]
    assert columns == ["src", "kind", "dst", "weight"]
