"""Modes composed from the others.

- `tigrag-spectrag`: TIGRAG's multi-hop ranking, then SpectRAG's budgeted selection of the
  context (diversity across documents and communities, no redundancy).
- `tigrag+literag`: reciprocal-rank fusion of TIGRAG (token-graph PPR, title links, entity
  hops) and LiteRAG (anchors and thresholded chunk-graph expansion), with LiteRAG's
  reasoning chains. The two find different second hops; fused they beat either alone on
  average over the three evaluation sets.
- `default`: reciprocal-rank fusion of the modes named in `RetrievalConfig.default_parts`
  (README, Results, says which and why), with LiteRAG's reasoning chains when LiteRAG is
  one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.retrieval.base import Query, RetrievalResult, Retriever, ScoredChunk, Trace
from app.retrieval.baselines import HybridRetriever
from app.retrieval.bridge import BridgeRetriever
from app.retrieval.fusion import rrf
from app.retrieval.literag import LiteragRetriever
from app.retrieval.selection import budgeted
from app.retrieval.spectrag import SpectragRetriever
from app.retrieval.tigrag import TigragRetriever

if TYPE_CHECKING:
    from app.engine import Engine

FUSION_DEPTH = 30


class TigragSpectragRetriever(TigragRetriever):
    name = "tigrag-spectrag"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        ranking = super()._retrieve(query, trace, k)
        return budgeted(self.engine, ranking, self.cfg.spectrag, trace)

    _select = SpectragRetriever._select


class TigragLiteragRetriever(Retriever):
    name = "tigrag+literag"

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.tigrag = TigragRetriever(engine)
        self.literag = LiteragRetriever(engine)

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        for part in (self.tigrag, self.literag):
            part.cfg = self.cfg  # UI overrides apply to both
        tigrag = self.tigrag._retrieve(query, trace, k)[:FUSION_DEPTH]
        literag = self.literag._retrieve(query, trace, k)[:FUSION_DEPTH]
        with trace.step("fusion", method="rrf", k=self.cfg.fusion.rrf_k):
            return rrf(
                {
                    "tigrag": [(s.chunk_id, s.score) for s in tigrag],
                    "literag": [(s.chunk_id, s.score) for s in literag],
                },
                self.cfg.fusion.rrf_k,
            )

    def warm(self) -> None:
        self.tigrag.warm()
        self.literag.warm()

    def _finish(self, query: Query, result: RetrievalResult) -> None:
        self.literag._finish(query, result)


FUSABLE: dict[str, type[Retriever]] = {
    "tigrag": TigragRetriever,
    "literag": LiteragRetriever,
    "bridge": BridgeRetriever,
    "hybrid": HybridRetriever,
}


class DefaultRetriever(Retriever):
    """RRF over the configured parts, each `FUSION_DEPTH` deep."""

    name = "default"

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._parts: dict[str, Retriever] = {}

    def _part(self, name: str) -> Retriever:
        if name not in self._parts:
            self._parts[name] = FUSABLE[name](self.engine)
        part = self._parts[name]
        part.cfg = self.cfg  # UI overrides apply to every part
        return part

    def parts(self, trace: Trace | None = None) -> tuple[str, ...]:
        """The configured parts, plus `hybrid` when the corpus's documents are long: there
        the graph walks find the right page (page recall at least hybrid's on sqlite-docs)
        but not the passage inside it that answers, which the query's own dense and BM25
        match does (README, Results). Decided from the index, not from a user's flag."""
        parts = tuple(self.cfg.default_parts)
        mode = self.cfg.passage_match
        per_document = self.engine.chunks_per_document()
        wanted = mode == "on" or (mode == "auto" and per_document >= self.cfg.passage_match_chunks)
        if wanted and "hybrid" not in parts:
            parts += ("hybrid",)
            if trace is not None:
                trace.notes.append(
                    f"passage match: hybrid joins the fusion ({per_document:.1f} chunks per "
                    f"document, passage_match={mode})"
                )
        return parts

    def warm(self) -> None:
        for name in self.parts():
            self._part(name).warm()

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        rankings = {
            name: [(s.chunk_id, s.score) for s in self._part(name)._retrieve(query, trace, k)]
            for name in self.parts(trace)
        }
        with trace.step("fusion", method="rrf", k=self.cfg.fusion.rrf_k, parts=list(rankings)):
            return rrf(
                {name: ranking[:FUSION_DEPTH] for name, ranking in rankings.items()},
                self.cfg.fusion.rrf_k,
                self.cfg.default_weights,
            )

    def _finish(self, query: Query, result: RetrievalResult) -> None:
        if "literag" in self.parts():
            self._part("literag")._finish(query, result)
