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
