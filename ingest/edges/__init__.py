"""The chunk graph: six typed, weighted edge kinds and their fusion into RELATED.

One module per kind, each with a `build` (the whole corpus) and an `update` (the previous
state plus the change) entry point: `semantic`, `within_document` (NEXT, SAME_SECTION),
`shares_entity`, `cites`, `utility`, `related`. `maintain.refresh_chunk_edges` picks update
or full build and writes the result; `journal` records what an update needs of the chunks a
write removes. Every kind is a function of the stored chunk facts only, so the edges after
any sequence of incremental ingests equal the edges of a fresh ingest. Each weight is in
[0, 1]. Edges are stored once per unordered pair (src < dst), except NEXT and CITES, which
point from the earlier chunk / the citing chunk.

The list-returning functions below are the whole-corpus builders by their old names.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph.types import ChunkEdge, ChunkRecord
from ingest.config import EdgeConfig
from ingest.edges import semantic, shares_entity, utility, within_document
from ingest.edges.cites import TitleMatcher, cites_edges, title_key
from ingest.edges.corpus import EdgeCorpus
from ingest.edges.kinds import build_all
from ingest.edges.model import EDGE_BUILDER_VERSION, KindEdges
from ingest.edges.related import related_edges
from ingest.tokens import Analyzer

__all__ = [
    "EDGE_BUILDER_VERSION",
    "TitleMatcher",
    "build_chunk_edges",
    "cites_edges",
    "next_edges",
    "related_edges",
    "same_section_edges",
    "semantic_edges",
    "shares_entity_edges",
    "title_key",
    "utility_edges",
]


def _corpus(chunks: Sequence[ChunkRecord], analyzer: Analyzer | None = None) -> EdgeCorpus:
    return EdgeCorpus(chunks, analyzer or Analyzer())


def semantic_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    return semantic.build(_corpus(chunks), cfg).edges()


def next_edges(chunks: Sequence[ChunkRecord]) -> list[ChunkEdge]:
    return KindEdges(within_document.NEXT, within_document.next_weights(chunks)).edges()


def same_section_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    weights = within_document.same_section_weights(chunks, cfg)
    return KindEdges(within_document.SAME_SECTION, weights).edges()


def shares_entity_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    return shares_entity.build(_corpus(chunks), cfg).edges()


def utility_edges(
    chunks: Sequence[ChunkRecord], analyzer: Analyzer, cfg: EdgeConfig
) -> list[ChunkEdge]:
    return utility.build(_corpus(chunks, analyzer), cfg).edges()


def build_chunk_edges(
    chunks: Sequence[ChunkRecord], cfg: EdgeConfig, analyzer: Analyzer
) -> dict[str, list[ChunkEdge]]:
    """All six kinds plus RELATED, keyed by kind (the order is the order of the report)."""
    return {
        kind: e.edges() for kind, e in build_all(_corpus(chunks, analyzer), cfg, analyzer).items()
    }
