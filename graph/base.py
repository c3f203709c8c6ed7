"""The one interface every graph backend implements (embedded SQLite/scipy, Neo4j/GDS).

Ingest writes through `apply` (atomic per call) and `replace_chunk_edges`; analytics write
communities and vectors; retrieval reads chunks, neighbourhoods and PPR scores. Both
implementations pass tests/graph/test_conformance.py. `AnalyticsHooks` are the steps of the
analytics pipeline (graph/analytics.py) that differ per backend; they are declared here, with
the store, so the store's interface does not depend on the pipeline that uses it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import sparse

from graph.config import AlgorithmConfig
from graph.types import (
    AnalyticsReport,
    ChunkEdge,
    ChunkEdgeChange,
    ChunkRecord,
    ChunkView,
    CommunityRecord,
    DocumentRecord,
    EntityMention,
    GraphDelta,
    GraphSnapshot,
    IndexInputs,
    StoreStatus,
    TermMatrix,
)


class GraphStore(ABC):
    """Storage and graph algorithms for one backend."""

    backend: str
    collection: str
    remote: bool = False  # every read is a network round trip: worth a copy in process

    # ---- lifecycle -------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None: ...

    def published_changed(self) -> None:  # noqa: B027 - only a server backend caches names
        """An ingest published a new index: forget what was cached of the published graphs
        (a server backend's projection names), so the next query reads them again."""

    @abstractmethod
    def settle(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) for the copies a warm-up started loading in the
        background, so the queries after it meet the steady state (a server backend's
        in-process token graph)."""

    @abstractmethod
    def clear(self) -> None:
        """Delete every node, edge and derived structure of this store's collection (tests,
        `ingest --rebuild`, `delete --collection`); nothing of other collections."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- ingest ----------------------------------------------------------------------
    @abstractmethod
    def documents(self) -> dict[str, DocumentRecord]: ...

    @abstractmethod
    def chunk_tokens(self, doc_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The stored valid-token sequence of every chunk of these documents."""

    @abstractmethod
    def apply(self, delta: GraphDelta) -> int:
        """Apply removals, additions and co-occurrence deltas in one transaction; delete
        CO_OCCURS edges whose weight reaches 0 and orphaned tokens and entities. Returns
        the new graph version."""

    @abstractmethod
    def corpus(self) -> list[ChunkRecord]:
        """Every stored chunk with embedding, entities, links and questions (no tokens),
        ordered by (doc_id, ordinal): the input of the chunk-graph edge builders."""

    @abstractmethod
    def document_chunks(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        """Every chunk of these documents, complete (tokens too), ordered by (doc_id,
        ordinal): what an incremental stage reads for just the documents a change touched."""

    @abstractmethod
    def index_inputs(self) -> IndexInputs:
        """Every chunk's id, document, questions and embedding, read as a stream (what a full
        build of the search files needs, and nothing more)."""

    @abstractmethod
    def chunk_records(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """These chunks, complete (tokens too), ordered by (doc_id, ordinal); unknown ids
        are left out: what an incremental edge update reads for the chunks it recomputes."""

    @abstractmethod
    def entity_holders(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """For each entity key, the chunks mentioning it (keys no chunk mentions are left
        out): who shares an entity with a changed chunk."""

    @abstractmethod
    def replace_chunk_edges(self, edges: Sequence[ChunkEdge]) -> None:
        """Make the stored chunk-to-chunk edges (six kinds and RELATED) exactly `edges`."""

    @abstractmethod
    def apply_chunk_edge_change(self, change: ChunkEdgeChange) -> int:
        """Apply one incremental (or, with `replace_all`, complete) chunk-edge change in one
        transaction, bump the graph version and return it."""

    @abstractmethod
    def chunk_edge_states(self, ids: Sequence[str]) -> dict[str, str]:
        """The stored edge state of each of these chunks that has one."""

    @abstractmethod
    def write_communities(
        self, assignment: dict[str, int], communities: Sequence[CommunityRecord]
    ) -> None: ...

    @abstractmethod
    def write_vectors(self, prop: str, vectors: dict[str, np.ndarray]) -> None:
        """Write a per-chunk vector property (`fastrp` or `spectral`)."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None: ...

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None: ...

    # ---- analytics -------------------------------------------------------------------
    @abstractmethod
    def run_analytics(self, cfg: AlgorithmConfig) -> AnalyticsReport:
        """Leiden communities, FastRP and spectral coordinates over the chunk graph,
        written back to the store (graph/analytics.py with this backend's hooks)."""

    @abstractmethod
    def analytics_hooks(self) -> AnalyticsHooks:
        """This backend's steps of the analytics pipeline (graph/analytics.py)."""

    @abstractmethod
    def patch_chunk_analytics(
        self, communities: dict[str, int], vectors: dict[str, dict[str, np.ndarray]]
    ) -> None:
        """Set the community and the `fastrp` / `spectral` vectors of some chunks, leaving
        every other chunk as it is (the local refresh after a small change)."""

    @abstractmethod
    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        """Personalised PageRank on the token graph from seed tokens; the top_k tokens
        with their raw scores (callers normalise)."""

    @abstractmethod
    def keep_token_graph(self, cfg: AlgorithmConfig) -> None:
        """Derive the query processes' copy of the published token graph now and keep it
        on this machine's disk (graph/kept.py), where a query process started later maps it
        instead of reading the graph from the store: an ingest calls this after publishing,
        so the cost is paid once, by the ingest, not by every server start after it."""

    def warm_token_ppr(self, cfg: AlgorithmConfig, token: str) -> None:
        """Make the token PageRank ready where queries will run it (a warm-up: an engine
        opening, a newly published version staged); by default one run from `token`."""
        self.token_ppr({token: 1.0}, cfg, top_k=1)

    @abstractmethod
    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        """The seeds' co-occurrence neighbours by summed edge weight to the seeds (the
        degree-centrality ablation of token PPR)."""

    @abstractmethod
    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        """Personalised PageRank on the RELATED subgraph induced by `candidates`."""

    # ---- reads -----------------------------------------------------------------------
    @abstractmethod
    def status(self) -> StoreStatus: ...

    @abstractmethod
    def chunk_count(self) -> int:
        """The collection's number of chunks: one index lookup, where `status` counts every
        relationship too (seconds on a large collection, so not on an ingest's path)."""

    @abstractmethod
    def graph_version(self) -> int: ...

    @abstractmethod
    def get_chunks(self, ids: Sequence[str]) -> list[ChunkView]:
        """Chunks in the order asked for; unknown ids are left out."""

    @abstractmethod
    def neighbours(self, ids: Sequence[str], kinds: Sequence[str] | None = None) -> list[ChunkEdge]:
        """Every stored chunk edge touching `ids` (of `kinds`, default all)."""

    @abstractmethod
    def document_titles(self) -> dict[str, tuple[str, str]]:
        """doc id → (title, id of its first chunk)."""

    @abstractmethod
    def chunk_entities(self, ids: Sequence[str]) -> dict[str, list[EntityMention]]: ...

    def citations_and_mentions(
        self, ids: Sequence[str]
    ) -> tuple[list[ChunkEdge], dict[str, list[EntityMention]]]:
        """`neighbours(ids, ["CITES"])` and `chunk_entities(ids)` together: what an entity
        hop reads. A server backend answers both in one round trip."""
        return self.neighbours(ids, kinds=["CITES"]), self.chunk_entities(ids)

    @abstractmethod
    def chunk_vectors(self, prop: str, ids: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """`embedding`, `fastrp` or `spectral` vectors (all chunks when ids is None)."""

    @abstractmethod
    def term_matrix(self) -> TermMatrix: ...

    @abstractmethod
    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        """The token co-occurrence graph as a symmetric weighted adjacency matrix."""

    @abstractmethod
    def communities(self) -> list[CommunityRecord]: ...

    @abstractmethod
    def snapshot(self) -> GraphSnapshot: ...


class AnalyticsHooks(ABC):
    """The backend-specific steps of the pipeline."""

    store: GraphStore

    @abstractmethod
    def prepare(self, cfg: AlgorithmConfig, report: AnalyticsReport, *, full: bool) -> None:
        """Make the current graph available to the steps below (GDS: project it)."""

    @abstractmethod
    def chunk_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        """Every chunk id (sorted) and the symmetric RELATED adjacency over them."""

    @abstractmethod
    def leiden(self, cfg: AlgorithmConfig) -> tuple[dict[str, int], float]:
        """Community per chunk (0..k-1 by size, then first chunk) and the modularity."""

    @abstractmethod
    def fastrp(self, cfg: AlgorithmConfig, report: AnalyticsReport) -> None:
        """Compute and store every chunk's FastRP vector."""

    @abstractmethod
    def publish(self) -> None:
        """A pass finished: queries may switch to the graph it ran on."""
