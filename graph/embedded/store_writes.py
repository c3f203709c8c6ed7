"""The embedded store's writes: document deltas (chunks, tokens, co-occurrence, entities),
chunk edges and their states, and the analytics results (communities, vectors).

Each write is one SQLite transaction (`_EmbeddedBase._tx`), so a killed ingest leaves the
file as it was before the write.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from graph.embedded.store_base import _blob, _EmbeddedBase
from graph.kept import STORE_ID
from graph.types import (
    EDGE_KINDS,
    RELATED,
    ChunkEdge,
    ChunkEdgeChange,
    ChunkRecord,
    CommunityRecord,
    DocumentRecord,
    GraphDelta,
)


class _EmbeddedWrites(_EmbeddedBase):
    """Everything that changes the graph, each call in one transaction."""

    # ---- ingest ----------------------------------------------------------------------
    def apply(self, delta: GraphDelta) -> int:
        with self._tx() as c:
            tokens: set[int] = set()
            entities: set[str] = set()
            for doc_id in delta.remove_doc_ids:
                self._remove_document(c, doc_id, tokens, entities)
            for doc, chunks in delta.add:
                self._add_document(c, doc, chunks)
            self._apply_cooccurrence(c, delta.cooccurrence)
            c.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", delta.meta.items()
            )
            c.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_at', ?)",
                (time.strftime("%Y-%m-%d %H:%M:%S"),),
            )
            # What copies kept outside the store check they belong to (graph/kept.py): a
            # cleared store gets a new one with its next write.
            c.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                (STORE_ID, uuid.uuid4().hex),
            )
            # Only what the removed chunks held can have lost its last holder: the cost of a
            # write follows the write, not the collection.
            c.executemany(
                "DELETE FROM tokens WHERE id = ? AND df <= 0", [(t,) for t in sorted(tokens)]
            )
            c.executemany(
                "DELETE FROM entities WHERE key = ? AND NOT EXISTS "
                "(SELECT 1 FROM mentions WHERE entity_key = ?)",
                [(k, k) for k in sorted(entities)],
            )
            return self._bump_version(c)

    def _remove_document(
        self, c: sqlite3.Connection, doc_id: str, tokens: set[int], entities: set[str]
    ) -> None:
        """Removes the document and its chunks; adds the ids of the tokens and the keys of
        the entities they held to `tokens` and `entities`."""
        keys = [r[0] for r in c.execute("SELECT key FROM chunks WHERE doc_id = ?", (doc_id,))]
        for key in keys:
            held = c.execute("SELECT token_id FROM has_token WHERE chunk = ?", (key,))
            own = [r[0] for r in held]
            tokens.update(own)
            c.executemany("UPDATE tokens SET df = df - 1 WHERE id = ?", [(t,) for t in own])
            held = c.execute("SELECT entity_key FROM mentions WHERE chunk = ?", (key,))
            entities.update(r[0] for r in held)
            c.execute("DELETE FROM has_token WHERE chunk = ?", (key,))
            c.execute("DELETE FROM mentions WHERE chunk = ?", (key,))
            c.execute("DELETE FROM chunk_edges WHERE src = ?", (key,))
            c.execute("DELETE FROM chunk_edges WHERE dst = ?", (key,))
            c.execute("DELETE FROM chunk_edge_state WHERE chunk = ?", (key,))
        c.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        c.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def _token_ids(self, c: sqlite3.Connection, texts: Iterable[str]) -> dict[str, int]:
        texts = list(set(texts))
        c.executemany(
            "INSERT OR IGNORE INTO tokens (text, df) VALUES (?, 0)", ((t,) for t in texts)
        )
        ids: dict[str, int] = {}
        for start in range(0, len(texts), 500):
            part = texts[start : start + 500]
            marks = ",".join("?" * len(part))
            ids.update(c.execute(f"SELECT text, id FROM tokens WHERE text IN ({marks})", part))
        return ids

    def _add_document(
        self, c: sqlite3.Connection, doc: DocumentRecord, chunks: Sequence[ChunkRecord]
    ) -> None:
        c.execute(
            "INSERT INTO documents (id, source, title, content_hash, ingested_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (doc.id, doc.source, doc.title, doc.content_hash, doc.ingested_at),
        )
        c.executemany(
            "INSERT INTO chunks (id, doc_id, ordinal, title, text, section_path, n_tokens, "
            "tokens, embedding, links, questions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    ch.id,
                    ch.doc_id,
                    ch.ordinal,
                    ch.title,
                    ch.text,
                    json.dumps(list(ch.section_path)),
                    ch.n_tokens,
                    " ".join(ch.tokens),
                    _blob(ch.embedding),
                    json.dumps(list(ch.links)),
                    json.dumps(list(ch.questions)),
                )
                for ch in chunks
            ],
        )
        keys = dict(c.execute("SELECT id, key FROM chunks WHERE doc_id = ?", (doc.id,)))
        ids = self._token_ids(c, (t for ch in chunks for t in ch.tokens))
        rows = [(keys[ch.id], ids[t], tf) for ch in chunks for t, tf in ch.token_counts().items()]
        c.executemany("INSERT INTO has_token (chunk, token_id, tf) VALUES (?, ?, ?)", rows)
        df: dict[int, int] = defaultdict(int)
        for _, tid, _ in rows:
            df[tid] += 1
        c.executemany("UPDATE tokens SET df = df + ? WHERE id = ?", [(n, t) for t, n in df.items()])
        for ch in chunks:
            for ent in ch.entities:
                c.execute(
                    "INSERT OR IGNORE INTO entities (key, name, label) VALUES (?, ?, ?)",
                    (ent.key, ent.name, ent.label),
                )
                c.execute(
                    "INSERT INTO mentions (chunk, entity_key, count) VALUES (?, ?, ?) "
                    "ON CONFLICT (chunk, entity_key) "
                    "DO UPDATE SET count = count + excluded.count",
                    (keys[ch.id], ent.key, ent.count),
                )

    def _apply_cooccurrence(self, c: sqlite3.Connection, pairs: dict[tuple[str, str], int]) -> None:
        if not pairs:
            return
        ids = self._token_ids(c, (t for pair in pairs for t in pair))
        c.executemany(
            "INSERT INTO cooccurs (a, b, weight) VALUES (?, ?, ?) "
            "ON CONFLICT (a, b) DO UPDATE SET weight = weight + excluded.weight",
            [(ids[a], ids[b], w) for (a, b), w in pairs.items()],
        )
        c.executemany(
            "DELETE FROM cooccurs WHERE a = ? AND b = ? AND weight <= 0",
            [(ids[a], ids[b]) for (a, b), w in pairs.items() if w <= 0],
        )

    def replace_chunk_edges(self, edges: Sequence[ChunkEdge]) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM chunk_edges")
            self._write_edges(c, edges)
            self._bump_version(c)

    def apply_chunk_edge_change(self, change: ChunkEdgeChange) -> int:
        for e in change.write:
            if e.kind not in (*EDGE_KINDS, RELATED):
                raise ValueError(f"unknown chunk edge kind {e.kind!r}")
        with self._tx() as c:
            if change.replace_all:
                c.execute("DELETE FROM chunk_edges")
                c.execute("DELETE FROM chunk_edge_state")
            keys = self._chunk_keys(
                c,
                [x for _, s, d in change.delete for x in (s, d)]
                + list(change.drop_states)
                + list(change.states),
            )
            codes = self._kind_codes(c)
            c.executemany(
                "DELETE FROM chunk_edges WHERE src = ? AND kind = ? AND dst = ?",
                [
                    (keys[src], codes[kind], keys[dst])
                    for kind, src, dst in change.delete
                    if src in keys and dst in keys
                ],
            )
            self._write_edges(c, change.write)
            c.executemany(
                "DELETE FROM chunk_edge_state WHERE chunk = ?",
                [(keys[i],) for i in change.drop_states if i in keys],
            )
            c.executemany(
                "INSERT OR REPLACE INTO chunk_edge_state (chunk, state) VALUES (?, ?)",
                [(keys[i], state) for i, state in change.states.items() if i in keys],
            )
            c.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", change.meta.items()
            )
            return self._bump_version(c)

    def _write_edges(self, c: sqlite3.Connection, edges: Sequence[ChunkEdge]) -> None:
        """Insert or re-weight `edges`. An edge to a chunk the store does not hold is not
        written (as a MATCH that finds no node writes nothing on Neo4j)."""
        keys = self._chunk_keys(c, [x for e in edges for x in (e.src, e.dst)])
        codes = self._kind_codes(c)
        c.executemany(
            "INSERT INTO chunk_edges (src, kind, dst, weight) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (src, kind, dst) DO UPDATE SET weight = excluded.weight",
            [
                (keys[e.src], codes[e.kind], keys[e.dst], float(e.weight))
                for e in edges
                if e.src in keys and e.dst in keys
            ],
        )

    @staticmethod
    def _chunk_keys(c: sqlite3.Connection, ids: Iterable[str]) -> dict[str, int]:
        """Chunk id → its integer key, for the ids the store holds."""
        wanted = list(dict.fromkeys(ids))
        if len(wanted) > 50_000:  # most of a large collection: one scan beats lookups
            found = set(wanted)
            return {i: k for i, k in c.execute("SELECT id, key FROM chunks") if i in found}
        keys: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            keys.update(c.execute(f"SELECT id, key FROM chunks WHERE id IN ({marks})", part))
        return keys

    @staticmethod
    def _kind_codes(c: sqlite3.Connection) -> dict[str, int]:
        return {name: code for code, name in c.execute("SELECT code, name FROM edge_kinds")}

    def write_communities(
        self, assignment: dict[str, int], communities: Sequence[CommunityRecord]
    ) -> None:
        with self._tx() as c:
            c.execute("UPDATE chunks SET community = NULL")
            c.executemany(
                "UPDATE chunks SET community = ? WHERE id = ?",
                [(int(cid), chunk) for chunk, cid in assignment.items()],
            )
            c.execute("DELETE FROM communities")
            c.executemany(
                "INSERT INTO communities (id, level, size, top_tokens) VALUES (?, ?, ?, ?)",
                [(m.id, m.level, m.size, json.dumps(list(m.top_tokens))) for m in communities],
            )

    def write_vectors(self, prop: str, vectors: dict[str, np.ndarray]) -> None:
        if prop not in ("fastrp", "spectral"):
            raise ValueError(f"unknown vector property {prop!r}")
        with self._tx() as c:
            c.execute(f"UPDATE chunks SET {prop} = NULL")
            c.executemany(
                f"UPDATE chunks SET {prop} = ? WHERE id = ?",
                [(_blob(v), cid) for cid, v in vectors.items()],
            )

    def patch_chunk_analytics(
        self, communities: dict[str, int], vectors: dict[str, dict[str, np.ndarray]]
    ) -> None:
        with self._tx() as c:
            c.executemany(
                "UPDATE chunks SET community = ? WHERE id = ?",
                [(int(m), cid) for cid, m in communities.items()],
            )
            for prop in ("fastrp", "spectral"):
                c.executemany(
                    f"UPDATE chunks SET {prop} = ? WHERE id = ?",
                    [(_blob(v), cid) for cid, v in vectors.get(prop, {}).items()],
                )
