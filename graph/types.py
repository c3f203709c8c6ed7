"""Typed records that cross the boundary between ingest, storage and retrieval.

Ingest produces them, graph stores persist them, the query layer reads them. They are plain
dataclasses so both backends (and the conformance suite) can compare them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: a process that reads settings needs neither
    import numpy as np
    from scipy import sparse

EdgeKind = Literal["SEMANTIC", "NEXT", "SAME_SECTION", "SHARES_ENTITY", "CITES", "UTILITY"]
EDGE_KINDS: tuple[EdgeKind, ...] = (
    "SEMANTIC",
    "NEXT",
    "SAME_SECTION",
    "SHARES_ENTITY",
    "CITES",
    "UTILITY",
)
RELATED = "RELATED"


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One source document. `content_hash` decides whether a re-ingest must touch it."""

    id: str
    source: str
    title: str
    content_hash: str
    ingested_at: float = 0.0


@dataclass(frozen=True, slots=True)
class EntityMention:
    name: str
    label: str
    count: int = 1

    @property
    def key(self) -> str:
        """Entities are identified by normalised surface form and label."""
        return f"{self.label}:{self.name.casefold()}"


@dataclass(slots=True)
class ChunkRecord:
    """A chunk as ingest produced it: text plus every fact derived from the text alone.

    `tokens` is the valid-token sequence in order; co-occurrence weights and HAS_TOKEN tf are
    computed from it, and storing it makes removing a chunk's contribution exact.
    """

    id: str
    doc_id: str
    ordinal: int
    title: str
    text: str
    section_path: tuple[str, ...] = ()
    n_tokens: int = 0
    tokens: tuple[str, ...] = ()
    embedding: np.ndarray | None = None
    entities: tuple[EntityMention, ...] = ()
    links: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()

    def token_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for tok in self.tokens:
            counts[tok] = counts.get(tok, 0) + 1
        return counts


@dataclass(frozen=True, slots=True)
class ChunkEdge:
    """A typed chunk-to-chunk edge, stored once per unordered pair with src < dst
    (NEXT and CITES keep their direction)."""

    kind: str
    src: str
    dst: str
    weight: float


@dataclass(slots=True)
class GraphDelta:
    """Everything one atomic write changes: documents removed (all their chunks, mentions
    and token contributions) then documents added. Co-occurrence and df changes are
    signed integer deltas, so applying the removal of a document exactly undoes its
    addition."""

    remove_doc_ids: list[str] = field(default_factory=list)
    add: list[tuple[DocumentRecord, list[ChunkRecord]]] = field(default_factory=list)
    cooccurrence: dict[tuple[str, str], int] = field(default_factory=dict)
    # Meta entries written in the same transaction (the chunk-edge change journal).
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.remove_doc_ids or self.add)


@dataclass(slots=True)
class ChunkEdgeChange:
    """One transaction of chunk-edge maintenance: with `replace_all`, every chunk edge and
    edge state is deleted first (a full build); then the `delete` keys (kind, src, dst) go,
    the `write` edges are created, per-chunk edge states (opaque text) are set or dropped,
    and the `meta` entries are set. Deleting an edge that is not stored is not an error."""

    replace_all: bool = False
    delete: list[tuple[str, str, str]] = field(default_factory=list)
    write: list[ChunkEdge] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    drop_states: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ChunkView:
    """A stored chunk as retrieval sees it (no token sequence, optional vectors)."""

    id: str
    doc_id: str
    ordinal: int
    title: str
    text: str
    section_path: tuple[str, ...]
    n_tokens: int
    community: int | None = None
    source: str = ""


@dataclass(slots=True)
class CommunityRecord:
    id: int
    level: int
    size: int
    top_tokens: tuple[str, ...]


@dataclass(slots=True)
class StoreStatus:
    backend: str
    documents: int
    chunks: int
    tokens: int
    edges: dict[str, int]
    communities: int
    graph_version: int

    def as_dict(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "documents": self.documents,
            "chunks": self.chunks,
            "tokens": self.tokens,
            "edges": dict(self.edges),
            "communities": self.communities,
            "graph_version": self.graph_version,
        }


@dataclass(slots=True)
class GraphSnapshot:
    """A canonical, backend-independent dump used to prove two stores hold the same graph."""

    documents: dict[str, str]  # id -> content_hash
    chunks: dict[str, tuple[str, int]]  # id -> (doc_id, ordinal)
    tokens: dict[str, int]  # text -> df
    has_token: dict[tuple[str, str], int]  # (chunk, token) -> tf
    cooccurs: dict[tuple[str, str], int]  # (a, b) a < b -> weight
    entities: set[str]
    mentions: dict[tuple[str, str], int]  # (chunk, entity key) -> count
    chunk_edges: dict[tuple[str, str, str], float]  # (kind, src, dst) -> weight


@dataclass(slots=True)
class TermMatrix:
    """Chunk × token term frequencies (CSR), the input of the lexical index."""

    chunk_ids: list[str]
    vocabulary: list[str]
    tf: sparse.csr_matrix


@dataclass(slots=True)
class IndexInputs:
    """What a full build of the search files reads of every chunk, compactly: ids sorted,
    each chunk's document and utility questions, and the chunks that have an embedding
    (`vector_ids`, sorted) with their vectors as one float32 matrix. At 200k chunks the
    chunk records themselves (text, entities, one array per vector) would take gigabytes."""

    chunk_ids: list[str]
    chunk_docs: list[str]
    questions: list[tuple[str, ...]]
    vector_ids: list[str]
    vectors: np.ndarray


@dataclass(slots=True)
class AnalyticsReport:
    """What an analytics run produced, for the ingest report and the Leiden guard."""

    seconds: dict[str, float] = field(default_factory=dict)
    communities: int = 0
    modularity: float = 0.0
    warnings: list[str] = field(default_factory=list)
