"""The embedded store's reads: documents and chunks, neighbours, entities and vectors,
status, and the whole-graph views (term matrix, token graph, snapshot) analytics and tests
read.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from scipy import sparse

from graph.adjacency import symmetric
from graph.base import TermMatrix
from graph.embedded.store_base import _EmbeddedBase, _vec
from graph.types import (
    EDGE_KINDS,
    RELATED,
    ChunkEdge,
    ChunkRecord,
    ChunkView,
    CommunityRecord,
    DocumentRecord,
    EntityMention,
    GraphSnapshot,
    IndexInputs,
    StoreStatus,
)

_VECTOR_PROPS = ("embedding", "fastrp", "spectral")


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


def _stacked(blobs: list[bytes]) -> np.ndarray:
    """float32 vector blobs as one (n, dim) matrix (joined once, not one array each)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).copy()


class _EmbeddedReads(_EmbeddedBase):
    """Everything that reads the graph; none of it writes."""

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
        return self._chunk_records_where("doc_id", doc_ids)

    def index_inputs(self) -> IndexInputs:
        ids, docs, questions, vector_ids, vectors = [], [], [], [], []
        with self._lock:  # streamed from the cursor, one row at a time
            for cid, doc, blob, asked in self._conn.execute(
                "SELECT id, doc_id, embedding, questions FROM chunks ORDER BY id"
            ):
                ids.append(cid)
                docs.append(doc)
                questions.append(tuple(json.loads(asked)))
                if blob is not None:
                    vector_ids.append(cid)
                    vectors.append(blob)
        return IndexInputs(ids, docs, questions, vector_ids, _stacked(vectors))

    def chunk_records(self, ids: Sequence[str]) -> list[ChunkRecord]:
        return self._chunk_records_where("id", ids)

    def _chunk_records_where(self, column: str, values: Iterable[str]) -> list[ChunkRecord]:
        """The complete chunks whose `column` (id or doc_id) is one of `values`, ordered by
        (doc_id, ordinal), read 500 values at a time."""
        wanted = list(dict.fromkeys(values))
        rows: list[tuple] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows += self._rows(
                "SELECT id, doc_id, ordinal, title, text, section_path, n_tokens, embedding, "
                f"links, questions, tokens FROM chunks WHERE {column} IN ({marks})",
                part,
            )
        rows.sort(key=lambda r: (r[1], r[2]))
        entities = self.chunk_entities([r[0] for r in rows])
        return [_chunk_record(r, entities) for r in rows]

    def entity_holders(self, keys: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, cid in self._rows(
                "SELECT m.entity_key, c.id FROM mentions m JOIN chunks c ON c.key = m.chunk "
                f"WHERE m.entity_key IN ({marks})",
                part,
            ):
                out[key].append(cid)
        return {k: sorted(v) for k, v in out.items()}

    def chunk_edge_states(self, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            out.update(
                self._rows(
                    "SELECT c.id, s.state FROM chunks c JOIN chunk_edge_state s "
                    f"ON s.chunk = c.key WHERE c.id IN ({marks})",
                    part,
                )
            )
        return out

    # ---- reads -----------------------------------------------------------------------
    def status(self) -> StoreStatus:
        """From the counts the triggers keep (schema.sql): no table is scanned."""
        counts = dict(self._rows("SELECT name, n FROM counts"))
        edges = {kind: 0 for kind in (*EDGE_KINDS, RELATED)}
        for code, name in self._rows("SELECT code, name FROM edge_kinds"):
            edges[name] = counts.get(f"edges:{code}", 0)
        edges["CO_OCCURS"] = counts["cooccurs"]
        edges["HAS_TOKEN"] = counts["has_token"]
        edges["MENTIONS"] = counts["mentions"]
        return StoreStatus(
            backend=self.backend,
            documents=counts["documents"],
            chunks=counts["chunks"],
            tokens=counts["tokens"],
            edges=edges,
            communities=counts["communities"],
            graph_version=self.graph_version(),
        )

    def chunk_count(self) -> int:
        return int(self._rows("SELECT n FROM counts WHERE name = 'chunks'")[0][0])

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
        """Each edge once: per chunk, those it starts by (kind, dst), then those it ends by
        (kind, src), as format 1's text-keyed indexes returned them."""
        only = list(dict.fromkeys(kinds)) if kinds else []
        codes = [c for c, n in self._rows("SELECT code, name FROM edge_kinds") if n in only]
        if only and not codes:
            return []
        of_kind = f" AND e.kind IN ({','.join('?' * len(codes))})" if only else ""
        named = (
            "SELECT k.name, s.id, d.id, e.weight FROM chunk_edges e "
            "JOIN chunks s ON s.key = e.src JOIN chunks d ON d.key = e.dst "
            "JOIN edge_kinds k ON k.code = e.kind WHERE "
        )
        seen: set[tuple[str, str, str]] = set()
        out: list[ChunkEdge] = []
        for cid in dict.fromkeys(ids):
            found = self._rows("SELECT key FROM chunks WHERE id = ?", (cid,))
            if not found:
                continue
            key = found[0][0]
            starts = sorted(self._rows(f"{named}e.src = ?{of_kind}", (key, *codes)),
                            key=lambda r: (r[0], r[2]))  # fmt: skip
            ends = sorted(self._rows(f"{named}e.dst = ?{of_kind}", (key, *codes)),
                          key=lambda r: (r[0], r[1]))  # fmt: skip
            for kind, src, dst, w in starts + ends:
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
            "SELECT c.id, e.name, e.label, m.count FROM chunks c "
            "JOIN mentions m ON m.chunk = c.key JOIN entities e ON e.key = m.entity_key"
        )
        if ids is None:
            rows = self._rows(sql + " ORDER BY c.id, e.key")
        else:
            rows = []
            for cid in dict.fromkeys(ids):
                rows += self._rows(sql + " WHERE c.id = ? ORDER BY e.key", (cid,))
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

    def _key_rows(self) -> tuple[list[str], np.ndarray]:
        """Chunk ids in id order, and for each chunk key its row in that order (-1: none)."""
        keyed = self._rows("SELECT key, id FROM chunks ORDER BY id")
        chunk_ids = [i for _, i in keyed]
        keys = np.fromiter((k for k, _ in keyed), np.int64, len(keyed))
        row = np.full(int(keys.max(initial=0)) + 1, -1, dtype=np.int64)
        row[keys] = np.arange(len(keys))
        return chunk_ids, row

    def term_matrix(self) -> TermMatrix:
        chunk_ids, row = self._key_rows()
        vocab_rows = self._rows("SELECT id, text FROM tokens ORDER BY text")
        vocabulary = [t for _, t in vocab_rows]
        token_ids = np.fromiter((t for t, _ in vocab_rows), np.int64, len(vocab_rows))
        col = np.full(int(token_ids.max(initial=0)) + 1, -1, dtype=np.int64)
        col[token_ids] = np.arange(len(token_ids))
        with self._lock:  # streamed from the cursor: no list of every row (24M at 200k)
            counted = self._conn.execute("SELECT n FROM counts WHERE name = 'has_token'")
            count = int(counted.fetchone()[0])
            rows = self._conn.execute("SELECT chunk, token_id, tf FROM has_token")
            flat = np.fromiter((x for t in rows for x in t), np.int64, 3 * count)
        if not count:
            return TermMatrix(
                chunk_ids, vocabulary, sparse.csr_matrix((len(chunk_ids), len(vocabulary)))
            )
        keys, tids, tfs = flat[0::3], flat[1::3], flat[2::3]
        tf = sparse.csr_matrix(
            (tfs.astype(np.float32), (row[keys], col[tids])),
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

    def related_adjacency(self) -> tuple[list[str], sparse.csr_matrix]:
        """The RELATED graph over every chunk (ids sorted), streamed from the cursor into
        arrays: no edge object per row (5.6M at 200k chunks)."""
        chunk_ids, row = self._key_rows()
        with self._lock:
            code = self._conn.execute(
                "SELECT code FROM edge_kinds WHERE name = ?", (RELATED,)
            ).fetchone()[0]
            count = int(
                self._conn.execute(
                    "SELECT n FROM counts WHERE name = ?", (f"edges:{code}",)
                ).fetchone()[0]
            )
            rows = self._conn.execute(
                "SELECT src, dst, weight FROM chunk_edges WHERE kind = ?", (code,)
            )
            flat = np.fromiter((x for r in rows for x in r), np.float64, 3 * count)
        src, dst = flat[0::3].astype(np.int64), flat[1::3].astype(np.int64)
        return chunk_ids, symmetric(len(chunk_ids), row[src], row[dst], flat[2::3])

    def _chunk_id_of_key(self) -> dict[int, str]:
        return dict(self._rows("SELECT key, id FROM chunks"))

    def related_edges(self) -> list[ChunkEdge]:
        ids = self._chunk_id_of_key()
        return [
            ChunkEdge(RELATED, ids[s], ids[d], w)
            for s, d, w in self._rows(
                "SELECT e.src, e.dst, e.weight FROM chunk_edges e "
                "JOIN edge_kinds k ON k.code = e.kind WHERE k.name = ?",
                (RELATED,),
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
        ids = self._chunk_id_of_key()
        return GraphSnapshot(
            documents=dict(self._rows("SELECT id, content_hash FROM documents")),
            chunks={
                r[0]: (r[1], r[2]) for r in self._rows("SELECT id, doc_id, ordinal FROM chunks")
            },
            tokens={t: df for _, t, df in self._rows("SELECT id, text, df FROM tokens")},
            has_token={
                (ids[c], tok[t]): tf
                for c, t, tf in self._rows("SELECT chunk, token_id, tf FROM has_token")
            },
            cooccurs={
                (tok[a], tok[b]): w for a, b, w in self._rows("SELECT a, b, weight FROM cooccurs")
            },
            entities={r[0] for r in self._rows("SELECT key FROM entities")},
            mentions={
                (ids[c], k): n
                for c, k, n in self._rows("SELECT chunk, entity_key, count FROM mentions")
            },
            chunk_edges={
                (k, ids[s], ids[d]): round(w, 6)
                for k, s, d, w in self._rows(
                    "SELECT k.name, e.src, e.dst, e.weight FROM chunk_edges e "
                    "JOIN edge_kinds k ON k.code = e.kind"
                )
            },
        )
