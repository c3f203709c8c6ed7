"""Modes composed from the others: TIGRAG's multi-hop ranking, then SpectRAG's budgeted
selection of the context (diversity across documents and communities, no redundancy)."""

from __future__ import annotations

from app.retrieval.base import Query, ScoredChunk, Trace
from app.retrieval.selection import budgeted
from app.retrieval.spectrag import SpectragRetriever
from app.retrieval.tigrag import TigragRetriever


class TigragSpectragRetriever(TigragRetriever):
    name = "tigrag-spectrag"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        ranking = super()._retrieve(query, trace, k)
        return budgeted(self.engine, ranking, self.cfg.spectrag, trace)

    _select = SpectragRetriever._select
