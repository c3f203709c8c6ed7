"""The Neo4j backend: the real deployment. All statements come from cypher/*.cypher.

Every `apply` runs in one write transaction (documents, chunks, token df, co-occurrence
deltas, mentions and the version counters together), so a killed ingest never leaves a
half-written document or a weight counted twice. Graph algorithms run in GDS over named
projections kept in the catalog (graph/neo4j/gds.py).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from neo4j import ManagedTransaction, Result, RoutingControl
from scipy import sparse

import cypher
from graph.adjacency import token_adjacency
from graph.analytics import run_chunk_analytics
from graph.base import AnalyticsReport, GraphStore, TermMatrix
from graph.collections import DEFAULT_COLLECTION, check_collection
from graph.config import AlgorithmConfig, Neo4jConfig
from graph.errors import LegacyStore
from graph.neo4j.connection import connect, translate
from graph.neo4j.gds import GdsAnalytics, GdsHooks
from graph.neo4j.token_mirror import TokenMirror
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


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


GRAPH_VERSION, CONTENT_VERSION = "graph_version", "content_version"


# A full chunk-edge rebuild with more edges than this is written in several transactions.
FULL_EDGE_REBUILD_ROWS = 200_000


def _batches(rows: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


class Neo4jStore(GraphStore):
    backend = "neo4j"
    remote = True

    def __init__(self, cfg: Neo4jConfig, collection: str, *, allow_legacy: bool = False) -> None:
        """A store bound to one collection of the database. `allow_legacy` lets `ingest
        --rebuild` open `default` although an older neorag's graph is still there (it
        deletes that graph); otherwise its presence is an error naming the fix."""
        self.cfg = cfg
        self.collection = check_collection(collection)
        self.driver, self.gds_version = connect(cfg)
        self.gds_driver = self.driver
        if cfg.gds_uri:
            try:
                self.gds_driver = connect(cfg.model_copy(update={"uri": cfg.gds_uri}))[0]
            except BaseException:
                self.driver.close()
                raise
        self._schema_ready = False
        self._vector_dimension: int | None = None
        self.gds = GdsAnalytics(self)
        self.token_mirror = TokenMirror(self)
        if self.collection == DEFAULT_COLLECTION and not allow_legacy:
            try:
                self.check_legacy()
            except BaseException:
                self.close()
                raise

    # ---- plumbing --------------------------------------------------------------------
    def read(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named cypher/ file in a read transaction (`$collection` is this store's).
        Rows are plain dicts of the returned values: every named query returns properties
        and aggregates, never nodes, so `Record.data()`'s deep copy (5 of 6.5 s reading
        10k chunks with their embeddings) is not needed."""
        try:
            records, _, _ = self.driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
                routing_=RoutingControl.READ,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [dict(r) for r in records]

    def write(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        try:
            records, _, _ = self.driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [r.data() for r in records]

    def gds_query(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run the named cypher/ file on the GDS member: every statement that touches the
        graph catalog (project, list, drop) or runs an algorithm on a projection.
        Projections live in the memory of the member that made them, so all of these go to
        one member (the writer NEO4J_URI routes to, or NEO4J_GDS_URI's), never to whichever
        reader a routed read would pick."""
        try:
            records, _, _ = self.gds_driver.execute_query(
                cypher.load(query),
                {"collection": self.collection, **params},
                database_=self.cfg.database,
                routing_=RoutingControl.WRITE,
            )
        except Exception as exc:
            raise translate(exc, self.cfg) from None
        return [r.data() for r in records]

    def transaction(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        return self._in_session(work, write=True)

    def read_transaction(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Several reads in one read transaction, on one member (a routed read)."""
        return self._in_session(work, write=False)

    def _in_session(self, work: Callable[[ManagedTransaction], Any], *, write: bool) -> Any:
        try:
            with self.driver.session(database=self.cfg.database) as session:
                run = session.execute_write if write else session.execute_read
                return run(work)
        except Exception as exc:
            raise translate(exc, self.cfg) from None

    def run_in(self, tx: ManagedTransaction, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """The rows of the named cypher/ file, run inside `tx`."""
        return [r.data() for r in self._run(tx, name, **params)]

    def content_version_in(self, tx: ManagedTransaction) -> int:
        rows = self.run_in(tx, "meta_get", key=CONTENT_VERSION)
        return int(rows[0]["value"]) if rows else 0

    def _run(self, tx: ManagedTransaction, name: str, /, **params: Any) -> Result:
        """Run the named cypher/ file inside `tx`, with this store's `$collection`."""
        return tx.run(cypher.load(name), {"collection": self.collection, **params})

    def _unwind(
        self, tx: ManagedTransaction, name: str, key: str, rows: Sequence[Any], **extra: Any
    ) -> None:
        for part in _batches(rows, self.cfg.write_batch_size):
            self._run(tx, name, **{key: list(part), **extra}).consume()

    def ensure_schema(self, dimension: int | None = None) -> None:
        """Constraints and indexes, and this collection's registration, before a write."""
        if not self._schema_ready:
            for statement in cypher.statements("schema"):
                self.write_raw(statement)
            self.write("meta_set_if_absent", key="created_at", value=_now())
            self._schema_ready = True
        if dimension and dimension != self._vector_dimension:
            current = self.read("vector_index_dimension")
            if current and current[0]["dimension"] != dimension:
                self.write("drop_vector_index")
            self.write("vector_index", dimension=dimension)
            self._vector_dimension = dimension

    def write_raw(self, statement: str) -> None:
        try:
            self.driver.execute_query(statement, database_=self.cfg.database)
        except Exception as exc:
            raise translate(exc, self.cfg) from None

    def settle(self, timeout: float) -> None:
        self.token_mirror.wait(timeout)

    def close(self) -> None:
        if self.gds_driver is not self.driver:
            self.gds_driver.close()
        self.driver.close()

    def clear(self) -> None:
        """Delete this collection: its nodes, relationships and GDS projections. Other
        collections, and anything in the database that neorag did not write, stay."""
        self.gds.drop_all()
        self._auto_commit("clear_graph")
        self._schema_ready = False  # the next write registers the collection again

    def clear_legacy(self) -> None:
        """Delete what an older neorag (before collections) wrote: its nodes carry no
        `collection`, its projections have database-wide names. Only `ingest --rebuild`
        into `default` calls this."""
        self.gds.drop_legacy()
        self._auto_commit("clear_legacy_graph")

    def _auto_commit(self, name: str) -> None:
        """Statements with CALL … IN TRANSACTIONS need an auto-commit transaction."""
        try:
            with self.driver.session(database=self.cfg.database) as session:
                session.run(cypher.load(name), {"collection": self.collection}).consume()
        except Exception as exc:
            raise translate(exc, self.cfg) from None

    def check_legacy(self) -> None:
        """Refuse to mix with a graph an older neorag wrote (ids without collections)."""
        rows = self.read("legacy_documents")
        n = int(rows[0]["documents"]) if rows else 0
        if n:
            raise LegacyStore(
                f"Neo4j at {self.cfg.uri} holds {n} documents indexed by an older neorag "
                "(document ids without collections); re-index them with "
                "`neorag ingest PATH --rebuild`, which replaces that graph"
            )

    def collections(self) -> list[dict[str, Any]]:
        """Every collection in the database with its document and chunk counts."""
        return self.read("collections_list")

    def get_meta(self, key: str) -> str | None:
        rows = self.read("meta_get", key=key)
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.ensure_schema()
        self.write("meta_set", key=key, value=value)

    def graph_version(self) -> int:
        return int(self.get_meta(GRAPH_VERSION) or 0)

    def content_version(self) -> int:
        return int(self.get_meta(CONTENT_VERSION) or 0)

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
        for key, value in delta.meta.items():
            self._run(tx, "meta_set", key=key, value=value).consume()
        self._run(tx, "meta_increment", key=CONTENT_VERSION).consume()
        return self._run(tx, "meta_increment", key=GRAPH_VERSION).single()["value"]

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

    def corpus(self) -> list[ChunkRecord]:
        return [_chunk_record(r) for r in self.read("corpus_chunks")]

    def document_chunks(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        rows = self.read("document_chunks", doc_ids=list(dict.fromkeys(doc_ids)))
        return [_chunk_record(r) for r in rows]

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
        # A rewritten edge is deleted first: CREATE would add a second relationship.
        keys = {*change.delete, *((e.kind, e.src, e.dst) for e in change.write)}
        deletes = [{"kind": k, "src": s, "dst": d} for k, s, d in sorted(keys)]
        writes = [
            {"kind": e.kind, "src": e.src, "dst": e.dst, "weight": float(e.weight)}
            for e in change.write
        ]
        states = [{"chunk": c, "state": v} for c, v in sorted(change.states.items())]
        # `drop_states` needs no statement here: a chunk's state is a property of its node.
        if change.replace_all and len(writes) > FULL_EDGE_REBUILD_ROWS:
            return self._replace_chunk_edges_in_parts(change, writes, states)

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
        self, change: ChunkEdgeChange, writes: list[dict[str, Any]], states: list[dict[str, Any]]
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
        for part in _batches(writes, FULL_EDGE_REBUILD_ROWS):
            rows = list(part)
            self.transaction(
                lambda tx, rows=rows: self._unwind(tx, "create_chunk_edges", "edges", rows)
            )

        return int(self.transaction(lambda tx: self._close_edge_change(tx, change, states)))

    def chunk_edge_states(self, ids: Sequence[str]) -> dict[str, str]:
        rows = self.read("chunk_edge_states", ids=list(dict.fromkeys(ids)))
        return {r["id"]: r["state"] for r in rows}

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

    # ---- analytics -------------------------------------------------------------------
    def run_analytics(self, cfg: AlgorithmConfig) -> AnalyticsReport:
        return run_chunk_analytics(self.analytics_hooks(), cfg)

    def analytics_hooks(self) -> GdsHooks:
        return GdsHooks(self.gds, self)

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

    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        local = self.token_mirror.top(seeds, cfg, top_k)
        return local if local is not None else self.gds.token_ppr(seeds, cfg, top_k)

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        return self.gds.chunk_ppr(seeds, candidates, cfg)

    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        rows = self.read("token_degree_expansion", seeds=list(seeds), top_k=top_k)
        return {r["token"]: float(r["weight"]) for r in rows}

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
        return [ChunkEdge(r["kind"], r["src"], r["dst"], float(r["weight"])) for r in rows]

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
        chunk_ids = [r["id"] for r in self.read("all_chunk_ids")]
        vocabulary = sorted(r["text"] for r in self.read("all_tokens"))
        row = {c: i for i, c in enumerate(chunk_ids)}
        col = {t: j for j, t in enumerate(vocabulary)}
        triples = self.read("term_rows")
        shape = (len(chunk_ids), len(vocabulary))
        if not triples:
            return TermMatrix(chunk_ids, vocabulary, sparse.csr_matrix(shape))
        r = np.fromiter((row[t["chunk"]] for t in triples), np.int64, len(triples))
        c = np.fromiter((col[t["token"]] for t in triples), np.int64, len(triples))
        v = np.fromiter((t["tf"] for t in triples), np.float32, len(triples))
        return TermMatrix(chunk_ids, vocabulary, sparse.csr_matrix((v, (r, c)), shape=shape))

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        texts = sorted(r["text"] for r in self.read("all_tokens"))
        return texts, token_adjacency(texts, self.read("cooccurs_rows"))

    def related_edges(self) -> list[ChunkEdge]:
        return [
            ChunkEdge(RELATED, r["src"], r["dst"], float(r["weight"]))
            for r in self.read("related_rows")
        ]

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
