"""The Neo4j store's writes: document deltas (documents, chunks, token df, co-occurrence,
mentions), chunk edges and their states, and the analytics results (communities, vectors).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from neo4j import ManagedTransaction

from graph.neo4j.store_base import CONTENT_VERSION, GRAPH_VERSION, _Neo4jBase
from graph.titles import folded_title_key
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

# A full chunk-edge rebuild with more edges than this is written in several transactions.
FULL_EDGE_REBUILD_ROWS = 200_000
# A change touching more co-occurrence pairs than this is not recorded: a copy of the token
# graph reads it all again (a bulk ingest), which is then no slower than following it.
RECORDED_PAIRS_MAX = 200_000
RECORDED_PART = 20_000  # pairs per recorded part (one node each)
KEPT_CHANGES = 64  # content versions whose token-graph changes stay recorded


class _Neo4jWrites(_Neo4jBase):
    """Everything that changes the graph; each call commits in one transaction, except a
    full edge rebuild too large for one (`_replace_chunk_edges_in_parts`)."""

    # ---- ingest ----------------------------------------------------------------------
    def apply(self, delta: GraphDelta) -> int:
        dims = {len(c.embedding) for _, cs in delta.add for c in cs if c.embedding is not None}
        self.ensure_schema(dims.pop() if len(dims) == 1 else None)
        return int(self.transaction(lambda tx: self._apply(tx, delta)))

    def _apply(self, tx: ManagedTransaction, delta: GraphDelta) -> int:
        touched_tokens: set[str] = set()
        if delta.remove_doc_ids:
            old_chunks = [
                r["id"]
                for r in self._run(tx, "chunks_of_documents", doc_ids=delta.remove_doc_ids).data()
            ]
            old_keys = [
                r["key"] for r in self._run(tx, "entities_of_chunks", chunk_ids=old_chunks).data()
            ]
            for r in self._run(
                tx, "chunk_tokens_of_documents", doc_ids=delta.remove_doc_ids
            ).data():
                touched_tokens.update(r["tokens"] or ())
            self._unwind(tx, "token_df_decrement", "chunk_ids", old_chunks)
            self._unwind(tx, "delete_chunks", "chunk_ids", old_chunks)
            self._unwind(tx, "delete_documents", "doc_ids", delta.remove_doc_ids)
            self._unwind(tx, "delete_orphan_entities", "keys", old_keys)
        if delta.add:
            self._add(tx, delta.add)
        pairs = [{"a": a, "b": b, "w": w} for (a, b), w in sorted(delta.cooccurrence.items())]
        self._unwind(tx, "apply_cooccurs", "pairs", pairs)
        touched_tokens.update(t for a, b in delta.cooccurrence for t in (a, b))
        self._unwind(tx, "delete_orphan_tokens", "tokens", sorted(touched_tokens))
        self._record_token_graph_change(tx, delta, pairs, sorted(touched_tokens))
        for key, value in delta.meta.items():
            self._run(tx, "meta_set", key=key, value=value).consume()
        self._run(tx, "meta_increment", key=CONTENT_VERSION).consume()
        return self._run(tx, "meta_increment", key=GRAPH_VERSION).single()["value"]

    def _record_token_graph_change(
        self,
        tx: ManagedTransaction,
        delta: GraphDelta,
        pairs: list[dict[str, Any]],
        touched: list[str],
    ) -> None:
        """What this content version changes in the token graph, for the copies that
        follow it (graph/token_changes.py), and the records too old to follow dropped."""
        version = self.content_version_in(tx) + 1
        self._run(tx, "prune_token_graph_changes", through=version - KEPT_CHANGES).consume()
        if len(pairs) > RECORDED_PAIRS_MAX:
            return
        tokens = sorted({t for _, chunks in delta.add for c in chunks for t in c.tokens})
        parts = [pairs[i : i + RECORDED_PART] for i in range(0, len(pairs), RECORDED_PART)]
        parts = parts or [[]]
        for number, part in enumerate(parts):
            self._run(
                tx,
                "record_token_graph_change",
                version=version,
                part=number,
                parts=len(parts),
                pairs=[{"a": p["a"], "b": p["b"]} for p in part],
                tokens=tokens if number == 0 else [],
                touched=touched if number == 0 else [],
            ).consume()

    def _add(
        self, tx: ManagedTransaction, add: Sequence[tuple[DocumentRecord, list[ChunkRecord]]]
    ) -> None:
        docs = [
            {
                "id": d.id,
                "source": d.source,
                "title": d.title,
                "content_hash": d.content_hash,
                "ingested_at": d.ingested_at,
                "title_key": folded_title_key(d.title),
            }
            for d, _ in add
        ]
        self._unwind(tx, "create_documents", "docs", docs)
        chunks = [c for _, cs in add for c in cs]
        self._unwind(
            tx,
            "create_chunks",
            "chunks",
            [
                {
                    "id": c.id,
                    "doc_id": c.doc_id,
                    "ordinal": c.ordinal,
                    "title": c.title,
                    "text": c.text,
                    "section_path": list(c.section_path),
                    "n_tokens": c.n_tokens,
                    "tokens": list(c.tokens),
                    "links": list(c.links),
                    "questions": list(c.questions),
                    "embedding": None if c.embedding is None else [float(x) for x in c.embedding],
                }
                for c in chunks
            ],
        )
        df: dict[str, int] = defaultdict(int)
        has_token = []
        for c in chunks:
            for token, tf in c.token_counts().items():
                df[token] += 1
                has_token.append({"chunk": c.id, "token": token, "tf": tf})
        self._unwind(
            tx, "merge_tokens", "tokens", [{"text": t, "df": n} for t, n in sorted(df.items())]
        )
        self._unwind(tx, "create_has_token", "rows", has_token)
        mentions = [
            {"chunk": c.id, "key": e.key, "name": e.name, "label": e.label, "count": e.count}
            for c in chunks
            for e in c.entities
        ]
        self._unwind(tx, "merge_mentions", "rows", mentions)

    def replace_chunk_edges(self, edges: Sequence[ChunkEdge]) -> None:
        rows = [
            {"kind": e.kind, "src": e.src, "dst": e.dst, "weight": float(e.weight)} for e in edges
        ]
        for e in edges:
            if e.kind not in (*EDGE_KINDS, RELATED):
                raise ValueError(f"unknown chunk edge kind {e.kind!r}")

        def work(tx: ManagedTransaction) -> None:
            self._run(tx, "delete_chunk_edges").consume()
            self._unwind(tx, "create_chunk_edges", "edges", rows)
            self._run(tx, "meta_increment", key=GRAPH_VERSION).consume()

        self.transaction(work)

    def apply_chunk_edge_change(self, change: ChunkEdgeChange) -> int:
        for e in change.write:
            if e.kind not in (*EDGE_KINDS, RELATED):
                raise ValueError(f"unknown chunk edge kind {e.kind!r}")
        self.ensure_schema()
        states = [{"chunk": c, "state": v} for c, v in sorted(change.states.items())]
        # `drop_states` needs no statement here: a chunk's state is a property of its node.
        if change.replace_all and len(change.write) > FULL_EDGE_REBUILD_ROWS:
            return self._replace_chunk_edges_in_parts(change, states)
        # A rewritten edge is deleted first: CREATE would add a second relationship.
        keys = (
            set()
            if change.replace_all
            else {*change.delete, *((e.kind, e.src, e.dst) for e in change.write)}
        )
        deletes = [{"kind": k, "src": s, "dst": d} for k, s, d in sorted(keys)]
        writes = _edge_rows(change.write)

        def work(tx: ManagedTransaction) -> int:
            if change.replace_all:
                self._run(tx, "delete_chunk_edges").consume()
                self._run(tx, "clear_chunk_edge_states").consume()
            else:
                self._unwind(tx, "delete_chunk_edge_keys", "edges", deletes)
            self._unwind(tx, "create_chunk_edges", "edges", writes)
            return self._close_edge_change(tx, change, states)

        return int(self.transaction(work))

    def _close_edge_change(
        self, tx: ManagedTransaction, change: ChunkEdgeChange, states: list[dict[str, Any]]
    ) -> int:
        """An edge change's last writes: chunk states, meta, then the new graph version."""
        self._unwind(tx, "write_chunk_edge_states", "rows", states)
        for key, value in change.meta.items():
            self._run(tx, "meta_set", key=key, value=value).consume()
        return self._run(tx, "meta_increment", key=GRAPH_VERSION).single()["value"]

    def _replace_chunk_edges_in_parts(
        self, change: ChunkEdgeChange, states: list[dict[str, Any]]
    ) -> int:
        """A full rebuild too large for one transaction (at 50k chunks it passed the
        server's `dbms.memory.transaction.total.max`). The stored meta (the edge state) is
        emptied first, so a run that stops part-way is seen as having no edges built and
        rebuilds in full next time; the old edges go in batches, the new ones a part per
        transaction, and the states, meta and graph version come last."""

        def forget(tx: ManagedTransaction) -> None:
            for key in change.meta:
                self._run(tx, "meta_set", key=key, value="").consume()

        self.transaction(forget)
        self._auto_commit("delete_chunk_edges_in_batches")
        self._auto_commit("clear_chunk_edge_states_in_batches")
        for start in range(0, len(change.write), FULL_EDGE_REBUILD_ROWS):
            # Each part's rows are made as it is written: at 200k chunks the whole rebuild
            # is some 10M edges, gigabytes as one list of row dicts.
            rows = _edge_rows(change.write[start : start + FULL_EDGE_REBUILD_ROWS])
            self.transaction(
                lambda tx, rows=rows: self._unwind(tx, "create_chunk_edges", "edges", rows)
            )

        return int(self.transaction(lambda tx: self._close_edge_change(tx, change, states)))

    def write_communities(
        self, assignment: dict[str, int], communities: Sequence[CommunityRecord]
    ) -> None:
        def work(tx: ManagedTransaction) -> None:
            self._run(tx, "clear_communities").consume()
            self._run(tx, "clear_chunk_vectors", prop="community").consume()
            self._unwind(
                tx,
                "write_communities",
                "communities",
                [
                    {"id": m.id, "level": m.level, "size": m.size, "top_tokens": list(m.top_tokens)}
                    for m in communities
                ],
            )
            self._unwind(
                tx,
                "write_chunk_communities",
                "rows",
                [{"chunk": c, "community": int(m)} for c, m in sorted(assignment.items())],
            )

        self.transaction(work)

    def write_vectors(self, prop: str, vectors: dict[str, np.ndarray]) -> None:
        if prop not in ("fastrp", "spectral"):
            raise ValueError(f"unknown vector property {prop!r}")
        rows = [{"chunk": c, "vector": [float(x) for x in v]} for c, v in vectors.items()]

        def work(tx: ManagedTransaction) -> None:
            self._run(tx, "clear_chunk_vectors", prop=prop).consume()
            self._unwind(tx, "write_chunk_vectors", "rows", rows, prop=prop)

        self.transaction(work)

    def patch_chunk_analytics(
        self, communities: dict[str, int], vectors: dict[str, dict[str, np.ndarray]]
    ) -> None:
        def work(tx: ManagedTransaction) -> None:
            self._unwind(
                tx,
                "write_chunk_communities",
                "rows",
                [{"chunk": c, "community": int(m)} for c, m in sorted(communities.items())],
            )
            for prop in ("fastrp", "spectral"):
                rows = [
                    {"chunk": c, "vector": [float(x) for x in v]}
                    for c, v in sorted(vectors.get(prop, {}).items())
                ]
                self._unwind(tx, "write_chunk_vectors", "rows", rows, prop=prop)

        self.transaction(work)


def _edge_rows(edges: Sequence[ChunkEdge]) -> list[dict[str, Any]]:
    return [{"kind": e.kind, "src": e.src, "dst": e.dst, "weight": float(e.weight)} for e in edges]
