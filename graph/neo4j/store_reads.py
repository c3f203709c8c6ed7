"""The Neo4j store's reads: documents and chunks, neighbours, citations, entities and
vectors, status, and the whole-graph views (term matrix, token graph, snapshot) analytics
and tests read. Each is one named cypher/ query on a routed read.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from neo4j import ManagedTransaction
from scipy import sparse

from graph.adjacency import symmetric, token_adjacency
from graph.base import TermMatrix
from graph.neo4j.store_base import _Neo4jBase
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


class _Neo4jReads(_Neo4jBase):
    """Everything that reads the graph; none of it writes."""

    # ---- ingest ----------------------------------------------------------------------
    def documents(self) -> dict[str, DocumentRecord]:
        return {
            r["id"]: DocumentRecord(
                r["id"], r["source"], r["title"], r["content_hash"], r["ingested_at"] or 0.0
            )
            for r in self.read("documents_all")
        }

    def chunk_tokens(self, doc_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        return {
            r["id"]: tuple(r["tokens"] or ())
            for r in self.read("chunk_tokens_of_documents", doc_ids=list(doc_ids))
        }

    def corpus(self) -> list[ChunkRecord]:
        """Streamed: each row becomes its record (the vector a float32 array) as it arrives,
        so the rows are never all held as driver values (at 200k chunks, gigabytes)."""
        records = self.read_transaction(
            lambda tx: [_chunk_record(r) for r in self._run(tx, "corpus_chunks")]
        )
        return sorted(records, key=lambda c: (c.doc_id, c.ordinal))

    def document_chunks(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        rows = self.read("document_chunks", doc_ids=list(dict.fromkeys(doc_ids)))
        return [_chunk_record(r) for r in rows]

    def index_inputs(self) -> IndexInputs:
        def read(tx: ManagedTransaction) -> tuple[list[tuple[Any, ...]], array[float], int]:
            rows = []
            vectors = array("f")
            dim = 0
            for r in self._run(tx, "index_rows"):
                emb = r["embedding"]
                if emb is not None:
                    dim = len(emb)
                    vectors.extend(emb)
                rows.append((r["id"], r["doc_id"], tuple(r["questions"] or ()), emb is not None))
            return rows, vectors, dim

        rows, flat, dim = self.read_transaction(read)
        matrix = np.frombuffer(flat, dtype=np.float32).reshape(-1, dim) if dim else None
        with_vector = [i for i, row in enumerate(rows) if row[3]]
        vector_row = {i: j for j, i in enumerate(with_vector)}
        order = sorted(range(len(rows)), key=lambda i: rows[i][0])
        in_order = [i for i in order if rows[i][3]]
        vectors = (
            matrix[[vector_row[i] for i in in_order]]
            if matrix is not None
            else np.zeros((0, 0), dtype=np.float32)
        )
        return IndexInputs(
            [rows[i][0] for i in order],
            [rows[i][1] for i in order],
            [rows[i][2] for i in order],
            [rows[i][0] for i in in_order],
            vectors,
        )

    def chunk_records(self, ids: Sequence[str]) -> list[ChunkRecord]:
        rows = self.read("chunk_records", ids=list(dict.fromkeys(ids)))
        return [_chunk_record(r) for r in rows]

    def entity_holders(self, keys: Sequence[str]) -> dict[str, list[str]]:
        rows = self.read("entity_holders", keys=list(dict.fromkeys(keys)))
        return {r["key"]: sorted(r["chunks"]) for r in rows if r["chunks"]}

    def chunk_edge_states(self, ids: Sequence[str]) -> dict[str, str]:
        rows = self.read("chunk_edge_states", ids=list(dict.fromkeys(ids)))
        return {r["id"]: r["state"] for r in rows}

    # ---- reads -----------------------------------------------------------------------
    def status(self) -> StoreStatus:
        row = self.read("status_counts")[0]
        edges = {kind: int(row[kind.lower()]) for kind in (*EDGE_KINDS, RELATED)}
        edges["CO_OCCURS"] = int(row["co_occurs"])
        edges["HAS_TOKEN"] = int(row["has_token"])
        edges["MENTIONS"] = int(row["mentions"])
        return StoreStatus(
            backend=self.backend,
            documents=int(row["documents"]),
            chunks=int(row["chunks"]),
            tokens=int(row["tokens"]),
            edges=edges,
            communities=int(row["communities"]),
            graph_version=self.graph_version(),
        )

    def chunk_count(self) -> int:
        return int(self.read("chunk_count")[0]["chunks"])

    def get_chunks(self, ids: Sequence[str]) -> list[ChunkView]:
        rows = {r["id"]: r for r in self.read("get_chunks", ids=list(dict.fromkeys(ids)))}
        return [
            ChunkView(**_chunk_fields(r), community=r["community"], source=r["source"])
            for i in ids
            if (r := rows.get(i)) is not None
        ]

    def neighbours(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[ChunkEdge]:
        rows = self.read(
            "chunk_neighbours", ids=list(dict.fromkeys(ids)), kinds=list(kinds) if kinds else None
        )
        return [ChunkEdge(r["kind"], r["src"], r["dst"], float(r["weight"])) for r in _whole(rows)]

    def document_titles(self) -> dict[str, tuple[str, str]]:
        return {r["doc_id"]: (r["title"], r["chunk_id"]) for r in self.read("document_titles")}

    def chunk_entities(self, ids: Sequence[str] | None) -> dict[str, list[EntityMention]]:
        rows = (
            self.read("all_chunk_entities")
            if ids is None
            else self.read("chunk_entities", ids=list(dict.fromkeys(ids)))
        )
        out: dict[str, list[EntityMention]] = defaultdict(list)
        for r in rows:
            out[r["chunk"]].append(EntityMention(r["name"], r["label"], int(r["count"])))
        return dict(out)

    def citations_and_mentions(
        self, ids: Sequence[str]
    ) -> tuple[list[ChunkEdge], dict[str, list[EntityMention]]]:
        rows = self.read("chunk_citations_and_mentions", ids=list(dict.fromkeys(ids)))
        edges = {(e["src"], e["dst"]): float(e["weight"]) for r in rows for e in r["cites"]}
        mentions: dict[str, list[EntityMention]] = {}
        for r in rows:
            if r["mentions"]:
                ordered = sorted(r["mentions"], key=lambda m: m["key"])
                mentions[r["chunk"]] = [
                    EntityMention(m["name"], m["label"], int(m["count"])) for m in ordered
                ]
        cites = [ChunkEdge("CITES", src, dst, w) for (src, dst), w in edges.items()]
        return cites, mentions

    def chunk_vectors(self, prop: str, ids: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        if prop not in _VECTOR_PROPS:
            raise ValueError(f"unknown vector property {prop!r}")
        rows = self.read("chunk_vectors", prop=prop, ids=None if ids is None else list(ids))
        return {r["id"]: np.asarray(r["vector"], dtype=np.float32) for r in rows}

    def term_matrix(self) -> TermMatrix:
        """Streamed a chunk at a time (cypher/term_rows_by_chunk.cypher) into flat arrays:
        at 200k chunks the matrix has some 24M entries, which as one row dict each would
        take many gigabytes before a single array was built."""

        def read(tx: ManagedTransaction) -> TermMatrix:
            vocabulary = sorted(r["text"] for r in self.run_in(tx, "all_tokens"))
            col = {t: j for j, t in enumerate(vocabulary)}
            chunk_ids: list[str] = []
            lengths, cols, tfs = array("q"), array("i"), array("f")
            for record in self._run(tx, "term_rows_by_chunk"):
                chunk_ids.append(record["chunk"])
                tokens = record["tokens"]
                lengths.append(len(tokens))
                cols.extend(col[t] for t in tokens)
                tfs.extend(record["tfs"])
            indptr = np.concatenate([[0], np.cumsum(np.frombuffer(lengths, np.int64))])
            tf = sparse.csr_matrix(
                (np.frombuffer(tfs, np.float32), np.frombuffer(cols, np.int32), indptr),
                shape=(len(chunk_ids), len(vocabulary)),
            )
            tf.sum_duplicates()
            return TermMatrix(chunk_ids, vocabulary, tf)

        return self.read_transaction(read)

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        texts = sorted(r["text"] for r in self.read("all_tokens"))
        return texts, token_adjacency(texts, self.read("cooccurs_rows"))

    def related_edges(self) -> list[ChunkEdge]:
        return self.read_transaction(
            lambda tx: [
                ChunkEdge(RELATED, r["src"], r["dst"], float(r["weight"]))
                for r in _whole(self._run(tx, "related_rows"))
            ]
        )

    def related_adjacency(self) -> tuple[list[str], sparse.csr_matrix]:
        """The RELATED graph over every chunk (ids sorted), streamed into arrays inside one
        read transaction: no edge object per relationship (5.6M at 200k chunks)."""

        def read(tx: ManagedTransaction) -> tuple[list[str], sparse.csr_matrix]:
            ids = [r["id"] for r in self._run(tx, "all_chunk_ids")]
            index = {c: i for i, c in enumerate(ids)}
            src, dst, weight = array("q"), array("q"), array("d")
            for r in _whole(self._run(tx, "related_rows")):
                a, b = index.get(r["src"]), index.get(r["dst"])
                if a is not None and b is not None:
                    src.append(a)
                    dst.append(b)
                    weight.append(float(r["weight"]))
            return ids, symmetric(
                len(ids),
                np.frombuffer(src, np.int64),
                np.frombuffer(dst, np.int64),
                np.frombuffer(weight, np.float64),
            )

        return self.read_transaction(read)

    def chunk_ids(self) -> list[str]:
        return [r["id"] for r in self.read("all_chunk_ids")]

    def communities(self) -> list[CommunityRecord]:
        return [
            CommunityRecord(r["id"], r["level"], r["size"], tuple(r["top_tokens"] or ()))
            for r in self.read("communities")
        ]

    def snapshot(self) -> GraphSnapshot:
        return GraphSnapshot(
            documents={r["id"]: r["content_hash"] for r in self.read("snapshot_documents")},
            chunks={r["id"]: (r["doc_id"], r["ordinal"]) for r in self.read("snapshot_chunks")},
            tokens={r["text"]: r["df"] for r in self.read("all_tokens")},
            has_token={(r["chunk"], r["token"]): r["tf"] for r in self.read("term_rows")},
            cooccurs={(r["a"], r["b"]): r["weight"] for r in self.read("cooccurs_rows")},
            entities={r["key"] for r in self.read("all_entity_keys")},
            mentions={(r["chunk"], r["key"]): r["count"] for r in self.read("snapshot_mentions")},
            chunk_edges={
                (r["kind"], r["src"], r["dst"]): round(float(r["weight"]), 6)
                for r in self.read("chunk_edge_rows")
            },
        )


def _chunk_fields(r: Mapping[str, Any]) -> dict[str, Any]:
    """The fields every chunk row carries, as ChunkView and ChunkRecord name them."""
    return {
        "id": r["id"],
        "doc_id": r["doc_id"],
        "ordinal": r["ordinal"],
        "title": r["title"],
        "text": r["text"],
        "section_path": tuple(r["section_path"] or ()),
        "n_tokens": r["n_tokens"],
    }


def _chunk_record(r: Mapping[str, Any]) -> ChunkRecord:
    """A corpus row as a ChunkRecord (tokens only when the query returned them)."""
    emb = r["embedding"]
    return ChunkRecord(
        **_chunk_fields(r),
        tokens=tuple(r.get("tokens") or ()),
        embedding=None if emb is None else np.asarray(emb, dtype=np.float32),
        links=tuple(r["links"] or ()),
        questions=tuple(r["questions"] or ()),
        entities=tuple(
            EntityMention(name, label, int(n))
            for name, label, n in sorted(r["entities"], key=lambda e: f"{e[1]}:{e[0].casefold()}")
        ),
    )


def _whole(rows: Iterable[Any]) -> Iterator[Any]:
    """Edge rows whose relationship was still there when read: one that another
    transaction deletes during the read (a re-ingest) comes back without its properties."""
    return (
        r for r in rows if r["weight"] is not None and r["src"] is not None and r["dst"] is not None
    )
