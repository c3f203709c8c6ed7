"""The embedded backend: SQLite for durable state, scipy/igraph in-process for algorithms.

No server, nothing to install beyond the Python packages, so it is the default for a first
run and for fast tests. Reads for retrieval go through in-memory matrices built once per
graph version (see graph/embedded/memory.py).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from graph.adjacency import symmetric
from graph.analytics import run_chunk_analytics
from graph.base import AnalyticsReport, GraphStore, TermMatrix
from graph.collections import DEFAULT_COLLECTION, check_collection
from graph.config import AlgorithmConfig
from graph.embedded.analytics import EmbeddedAnalytics
from graph.embedded.memory import MemoryGraphs
from graph.errors import StoreFull
from graph.types import (
    EDGE_KINDS,
    RELATED,
    ChunkEdge,
    ChunkEdgeChange,
    ChunkRecord,
    ChunkView,
    CommunityRecord,
    DocumentRecord,
    EntityMention,
    GraphDelta,
    GraphSnapshot,
    StoreStatus,
)

_VECTOR_PROPS = ("embedding", "fastrp", "spectral")


def _vec(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def _chunk_fields(row: tuple) -> dict[str, Any]:
    """The leading columns of every chunk query (id, doc_id, ordinal, title, text,
    section_path, n_tokens) as ChunkView and ChunkRecord name them."""
    return {
        "id": row[0],
        "doc_id": row[1],
        "ordinal": row[2],
        "title": row[3],
        "text": row[4],
        "section_path": tuple(json.loads(row[5])),
        "n_tokens": row[6],
    }


def _chunk_record(row: tuple, entities: dict[str, list[EntityMention]]) -> ChunkRecord:
    """A `chunks` row (the leading columns, then embedding, links, questions and
    tokens-or-NULL) as a ChunkRecord with its entity mentions."""
    return ChunkRecord(
        **_chunk_fields(row),
        embedding=_vec(row[7]),
        links=tuple(json.loads(row[8])),
        questions=tuple(json.loads(row[9])),
        tokens=tuple(row[10].split()) if row[10] else (),
        entities=tuple(entities.get(row[0], ())),
    )


class EmbeddedStore(GraphStore):
    backend = "embedded"

    def __init__(self, path: Path, collection: str = DEFAULT_COLLECTION) -> None:
        """One SQLite file holds one collection (the file's folder is named after it)."""
        self.collection = check_collection(collection)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys = OFF")
        self._conn.executescript(
            resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")
        )
        self._lock = threading.RLock()
        self._memory = MemoryGraphs(self)

    # ---- plumbing --------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a full disk (or file size limit) rolls it back whole and
        becomes a StoreFull naming the store, so the file keeps its state before it."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if "full" in str(exc) or "disk I/O" in str(exc):
                    raise StoreFull(
                        f"cannot write the embedded store {self.path}: {exc} (disk full or "
                        "a file size limit); free space and run the command again — the "
                        "store keeps everything written before"
                    ) from None
                raise

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def settle(self, timeout: float) -> None:
        """Nothing loads in the background: the graph is read in process."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def clear(self) -> None:
        with self._tx() as c:
            for table in (
                "documents",
                "chunks",
                "tokens",
                "has_token",
                "cooccurs",
                "entities",
                "mentions",
                "chunk_edges",
                "chunk_edge_state",
                "communities",
                "meta",
            ):
                c.execute(f"DELETE FROM {table}")

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def graph_version(self) -> int:
        return int(self.get_meta("graph_version") or 0)

    def _bump_version(self, c: sqlite3.Connection) -> int:
        row = c.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
        version = int(row[0]) + 1 if row else 1
        c.execute("INSERT OR REPLACE INTO meta VALUES ('graph_version', ?)", (str(version),))
        return version

    # ---- ingest ----------------------------------------------------------------------
    def documents(self) -> dict[str, DocumentRecord]:
        return {
            r[0]: DocumentRecord(*r)
            for r in self._rows(
                "SELECT id, source, title, content_hash, ingested_at FROM documents"
            )
        }

    def chunk_tokens(self, doc_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for doc_id in doc_ids:
            for cid, tokens in self._rows(
                "SELECT id, tokens FROM chunks WHERE doc_id = ?", (doc_id,)
            ):
                out[cid] = tuple(tokens.split()) if tokens else ()
        return out

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
        chunk_ids = [r[0] for r in c.execute("SELECT id FROM chunks WHERE doc_id = ?", (doc_id,))]
        for cid in chunk_ids:
            held = c.execute("SELECT token_id FROM has_token WHERE chunk_id = ?", (cid,))
            own = [r[0] for r in held]
            tokens.update(own)
            c.executemany("UPDATE tokens SET df = df - 1 WHERE id = ?", [(t,) for t in own])
            held = c.execute("SELECT entity_key FROM mentions WHERE chunk_id = ?", (cid,))
            entities.update(r[0] for r in held)
            c.execute("DELETE FROM has_token WHERE chunk_id = ?", (cid,))
            c.execute("DELETE FROM mentions WHERE chunk_id = ?", (cid,))
            c.execute("DELETE FROM chunk_edges WHERE src = ? OR dst = ?", (cid, cid))
            c.execute("DELETE FROM chunk_edge_state WHERE chunk_id = ?", (cid,))
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
        ids = self._token_ids(c, (t for ch in chunks for t in ch.tokens))
        rows = [(ch.id, ids[t], tf) for ch in chunks for t, tf in ch.token_counts().items()]
        c.executemany("INSERT INTO has_token (chunk_id, token_id, tf) VALUES (?, ?, ?)", rows)
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
                    "INSERT INTO mentions (chunk_id, entity_key, count) VALUES (?, ?, ?) "
                    "ON CONFLICT (chunk_id, entity_key) "
                    "DO UPDATE SET count = count + excluded.count",
                    (ch.id, ent.key, ent.count),
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

    _CHUNK_RECORD_COLUMNS = (  # tokens left out (NULL): only document_chunks needs them
        "id, doc_id, ordinal, title, text, section_path, n_tokens, embedding, links, questions, "
        "NULL"
    )

    def corpus(self) -> list[ChunkRecord]:
        entities = self.chunk_entities(None)
        rows = self._rows(
            f"SELECT {self._CHUNK_RECORD_COLUMNS} FROM chunks ORDER BY doc_id, ordinal"
        )
        return [_chunk_record(r, entities) for r in rows]

    def document_chunks(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        wanted = list(dict.fromkeys(doc_ids))
        rows: list[tuple] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows += self._rows(
                "SELECT id, doc_id, ordinal, title, text, section_path, n_tokens, embedding, "
                f"links, questions, tokens FROM chunks WHERE doc_id IN ({marks})",
                part,
            )
        rows.sort(key=lambda r: (r[1], r[2]))
        entities = self.chunk_entities([r[0] for r in rows])
        return [_chunk_record(r, entities) for r in rows]

    def replace_chunk_edges(self, edges: Sequence[ChunkEdge]) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM chunk_edges")
            c.executemany(
                "INSERT INTO chunk_edges (kind, src, dst, weight) VALUES (?, ?, ?, ?)",
                [(e.kind, e.src, e.dst, float(e.weight)) for e in edges],
            )
            self._bump_version(c)

    def apply_chunk_edge_change(self, change: ChunkEdgeChange) -> int:
        for e in change.write:
            if e.kind not in (*EDGE_KINDS, RELATED):
                raise ValueError(f"unknown chunk edge kind {e.kind!r}")
        with self._tx() as c:
            if change.replace_all:
                c.execute("DELETE FROM chunk_edges")
                c.execute("DELETE FROM chunk_edge_state")
            c.executemany(
                "DELETE FROM chunk_edges WHERE src = ? AND kind = ? AND dst = ?",
                [(src, kind, dst) for kind, src, dst in change.delete],
            )
            c.executemany(
                "INSERT OR REPLACE INTO chunk_edges (kind, src, dst, weight) VALUES (?, ?, ?, ?)",
                [(e.kind, e.src, e.dst, float(e.weight)) for e in change.write],
            )
            c.executemany(
                "DELETE FROM chunk_edge_state WHERE chunk_id = ?",
                [(i,) for i in change.drop_states],
            )
            c.executemany(
                "INSERT OR REPLACE INTO chunk_edge_state (chunk_id, state) VALUES (?, ?)",
                list(change.states.items()),
            )
            c.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", change.meta.items()
            )
            return self._bump_version(c)

    def chunk_edge_states(self, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            out.update(
                self._rows(
                    f"SELECT chunk_id, state FROM chunk_edge_state WHERE chunk_id IN ({marks})",
                    part,
                )
            )
        return out

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

    # ---- analytics -------------------------------------------------------------------
    def run_analytics(self, cfg: AlgorithmConfig) -> AnalyticsReport:
        return run_chunk_analytics(self.analytics_hooks(), cfg)

    def analytics_hooks(self) -> EmbeddedAnalytics:
        return EmbeddedAnalytics(self, self._memory)

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

    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        return self._memory.token_ppr(seeds, cfg, top_k)

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        return self._memory.chunk_ppr(seeds, candidates, cfg)

    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        return self._memory.token_neighbourhood(seeds, top_k)

    # ---- reads -----------------------------------------------------------------------
    def status(self) -> StoreStatus:
        def count(sql: str) -> int:
            return int(self._rows(sql)[0][0])

        edges = {kind: 0 for kind in (*EDGE_KINDS, RELATED)}
        edges.update(dict(self._rows("SELECT kind, COUNT(*) FROM chunk_edges GROUP BY kind")))
        edges["CO_OCCURS"] = count("SELECT COUNT(*) FROM cooccurs")
        edges["HAS_TOKEN"] = count("SELECT COUNT(*) FROM has_token")
        edges["MENTIONS"] = count("SELECT COUNT(*) FROM mentions")
        return StoreStatus(
            backend=self.backend,
            documents=count("SELECT COUNT(*) FROM documents"),
            chunks=count("SELECT COUNT(*) FROM chunks"),
            tokens=count("SELECT COUNT(*) FROM tokens"),
            edges=edges,
            communities=count("SELECT COUNT(*) FROM communities"),
            graph_version=self.graph_version(),
        )

    def chunk_count(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM chunks")[0][0])

    def _chunk_rows(self, ids: Sequence[str]) -> dict[str, tuple]:
        found: dict[str, tuple] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for r in self._rows(
                "SELECT c.id, c.doc_id, c.ordinal, c.title, c.text, c.section_path, c.n_tokens, "
                f"c.community, d.source FROM chunks c JOIN documents d ON d.id = c.doc_id "
                f"WHERE c.id IN ({marks})",
                part,
            ):
                found[r[0]] = r
        return found

    def get_chunks(self, ids: Sequence[str]) -> list[ChunkView]:
        rows = self._chunk_rows(ids)
        return [
            ChunkView(**_chunk_fields(r), community=r[7], source=r[8])
            for i in ids
            if (r := rows.get(i)) is not None
        ]

    def neighbours(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[ChunkEdge]:
        # Both indexes lead with the chunk, then the kind: a kind filter is a range scan.
        only = list(dict.fromkeys(kinds)) if kinds else []
        of_kind = f" AND kind IN ({','.join('?' * len(only))})" if only else ""
        seen: set[tuple[str, str, str]] = set()
        out: list[ChunkEdge] = []
        for cid in dict.fromkeys(ids):
            for kind, src, dst, w in self._rows(
                f"SELECT kind, src, dst, weight FROM chunk_edges WHERE src = ?{of_kind} "
                f"UNION ALL SELECT kind, src, dst, weight FROM chunk_edges WHERE dst = ?{of_kind}",
                (cid, *only, cid, *only),
            ):
                if (kind, src, dst) not in seen:
                    seen.add((kind, src, dst))
                    out.append(ChunkEdge(kind, src, dst, w))
        return out

    def document_titles(self) -> dict[str, tuple[str, str]]:
        return {
            d: (t, c)
            for d, t, c in self._rows(
                "SELECT d.id, d.title, c.id FROM documents d "
                "JOIN chunks c ON c.doc_id = d.id AND c.ordinal = 0"
            )
        }

    def chunk_entities(self, ids: Sequence[str] | None) -> dict[str, list[EntityMention]]:
        out: dict[str, list[EntityMention]] = defaultdict(list)
        sql = (
            "SELECT m.chunk_id, e.name, e.label, m.count FROM mentions m "
            "JOIN entities e ON e.key = m.entity_key"
        )
        if ids is None:
            rows = self._rows(sql + " ORDER BY m.chunk_id, e.key")
        else:
            rows = []
            for cid in dict.fromkeys(ids):
                rows += self._rows(sql + " WHERE m.chunk_id = ? ORDER BY e.key", (cid,))
        for cid, name, label, n in rows:
            out[cid].append(EntityMention(name, label, n))
        return dict(out)

    def chunk_vectors(self, prop: str, ids: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        if prop not in _VECTOR_PROPS:
            raise ValueError(f"unknown vector property {prop!r}")
        if ids is None:
            rows = self._rows(f"SELECT id, {prop} FROM chunks WHERE {prop} IS NOT NULL")
        else:
            rows = []
            for cid in dict.fromkeys(ids):
                rows += self._rows(f"SELECT id, {prop} FROM chunks WHERE id = ?", (cid,))
        return {cid: v for cid, blob in rows if (v := _vec(blob)) is not None}

    def term_matrix(self) -> TermMatrix:
        chunk_ids = [r[0] for r in self._rows("SELECT id FROM chunks ORDER BY id")]
        vocab_rows = self._rows("SELECT id, text FROM tokens ORDER BY text")
        vocabulary = [t for _, t in vocab_rows]
        col = {tid: j for j, (tid, _) in enumerate(vocab_rows)}
        row = {cid: i for i, cid in enumerate(chunk_ids)}
        triples = self._rows("SELECT chunk_id, token_id, tf FROM has_token")
        if not triples:
            return TermMatrix(
                chunk_ids, vocabulary, sparse.csr_matrix((len(chunk_ids), len(vocabulary)))
            )
        r, c_, v = zip(*triples, strict=True)
        tf = sparse.csr_matrix(
            (
                np.asarray(v, dtype=np.float32),
                (
                    np.fromiter((row[x] for x in r), np.int64),
                    np.fromiter((col[x] for x in c_), np.int64),
                ),
            ),
            shape=(len(chunk_ids), len(vocabulary)),
        )
        return TermMatrix(chunk_ids, vocabulary, tf)

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        vocab_rows = self._rows("SELECT id, text FROM tokens ORDER BY text")
        texts = [t for _, t in vocab_rows]
        index = {tid: j for j, (tid, _) in enumerate(vocab_rows)}
        rows = self._rows("SELECT a, b, weight FROM cooccurs")
        ia = np.fromiter((index[r[0]] for r in rows), np.int64, len(rows))
        ib = np.fromiter((index[r[1]] for r in rows), np.int64, len(rows))
        w = np.fromiter((r[2] for r in rows), np.float64, len(rows))
        return texts, symmetric(len(texts), ia, ib, w)

    def related_edges(self) -> list[ChunkEdge]:
        return [
            ChunkEdge(RELATED, s, d, w)
            for s, d, w in self._rows(
                "SELECT src, dst, weight FROM chunk_edges WHERE kind = ?", (RELATED,)
            )
        ]

    def chunk_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM chunks ORDER BY id")]

    def communities(self) -> list[CommunityRecord]:
        return [
            CommunityRecord(i, lvl, size, tuple(json.loads(top)))
            for i, lvl, size, top in self._rows(
                "SELECT id, level, size, top_tokens FROM communities ORDER BY id"
            )
        ]

    def chunk_communities(self) -> dict[str, int]:
        return dict(self._rows("SELECT id, community FROM chunks WHERE community IS NOT NULL"))

    def snapshot(self) -> GraphSnapshot:
        tok = dict(self._rows("SELECT id, text FROM tokens"))
        return GraphSnapshot(
            documents=dict(self._rows("SELECT id, content_hash FROM documents")),
            chunks={
                r[0]: (r[1], r[2]) for r in self._rows("SELECT id, doc_id, ordinal FROM chunks")
            },
            tokens={t: df for _, t, df in self._rows("SELECT id, text, df FROM tokens")},
            has_token={(c, tok[t]): tf for c, t, tf in self._rows("SELECT * FROM has_token")},
            cooccurs={
                (tok[a], tok[b]): w for a, b, w in self._rows("SELECT a, b, weight FROM cooccurs")
            },
            entities={r[0] for r in self._rows("SELECT key FROM entities")},
            mentions={(c, k): n for c, k, n in self._rows("SELECT * FROM mentions")},
            chunk_edges={
                (k, s, d): round(w, 6)
                for k, s, d, w in self._rows("SELECT kind, src, dst, weight FROM chunk_edges")
            },
        )
