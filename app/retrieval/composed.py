"""Modes composed from the others.

- `tigrag-spectrag`: TIGRAG's multi-hop ranking, then SpectRAG's budgeted selection of the
  context (diversity across documents and communities, no redundancy).
- `tigrag+literag`: reciprocal-rank fusion of TIGRAG (token-graph PPR, title links, entity
  hops) and LiteRAG (anchors and thresholded chunk-graph expansion), with LiteRAG's
  reasoning chains. The two find different second hops; fused they beat either alone on
  average over the three evaluation sets.
- `default`: reciprocal-rank fusion of the modes named in `RetrievalConfig.default_parts`
  (docs/results.md says which and why), with LiteRAG's reasoning chains when LiteRAG is
  one of them.
"""

from __future__ import annotations

import math
import statistics
from concurrent.futures import ThreadPoolExecutor, wait
from functools import cache

from app.retrieval.base import (
    Query,
    RetrievalContext,
    RetrievalResult,
    Retriever,
    ScoredChunk,
    Trace,
)
from app.retrieval.baselines import HybridRetriever
from app.retrieval.bridge import BridgeRetriever
from app.retrieval.fusion import (
    order_within_documents,
    rrf,
    spread_documents,
    with_document_evidence,
)
from app.retrieval.links import doc_id_of
from app.retrieval.literag import LiteragRetriever
from app.retrieval.selection import budgeted
from app.retrieval.spectrag import SpectragRetriever
from app.retrieval.tigrag import TigragRetriever
from graph.threads import budget

FUSION_DEPTH = 30


def _cut(rankings: dict[str, list[tuple[str, float]]]) -> dict[str, list[tuple[str, float]]]:
    """Each part's ranking as deep as the fusion reads it."""
    return {name: ranking[:FUSION_DEPTH] for name, ranking in rankings.items()}


@cache
def _parts_pool() -> ThreadPoolExecutor:
    """The worker threads the default mode runs its later parts on (shared by queries)."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="default-part")


class TigragSpectragRetriever(TigragRetriever):
    name = "tigrag-spectrag"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        ranking = super()._retrieve(query, trace, k)
        return budgeted(self.engine, ranking, self.cfg.spectrag, trace)

    _select = SpectragRetriever._select


class TigragLiteragRetriever(Retriever):
    name = "tigrag+literag"

    def __init__(self, engine: RetrievalContext) -> None:
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

    def __init__(self, engine: RetrievalContext) -> None:
        super().__init__(engine)
        self._parts: dict[str, Retriever] = {}

    def _part(self, name: str) -> Retriever:
        if name not in self._parts:
            self._parts[name] = FUSABLE[name](self.engine)
        part = self._parts[name]
        part.cfg = self.cfg  # UI overrides apply to every part
        return part

    def parts(self) -> tuple[str, ...]:
        """The configured parts, and `hybrid` when passage match is on or may join."""
        parts = tuple(self.cfg.default_parts)
        if self.cfg.passage_match != "off" and "hybrid" not in parts:
            parts += ("hybrid",)
        return parts

    def warm(self) -> None:
        for name in self.parts():
            self._part(name).warm()

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        parts = tuple(self.cfg.default_parts)
        rankings = self._rankings(query, trace, k, parts)
        fused: list[ScoredChunk] | None = None
        matched = False
        if "hybrid" not in parts and self.cfg.passage_match != "off":
            fused = self._fuse(rankings, self._weights(False))  # the graph parts decide
            if matched := self._passage_match(fused[:k], trace):
                hybrid = self._part("hybrid")._retrieve(query, trace, k)
                rankings["hybrid"] = [(s.chunk_id, s.score) for s in hybrid]
                fused = None
        weights = self._weights(matched)
        evidence = self.cfg.passage_match_page_evidence if matched else 0.0
        with trace.step(
            "fusion",
            method="rrf",
            k=self.cfg.fusion.rrf_k,
            parts=list(rankings),
            weights=weights,
            page_evidence=evidence,
        ):
            fused = fused if fused is not None else self._fuse(rankings, weights)
            if evidence > 0:
                fused = with_document_evidence(
                    fused, _cut(rankings), self.cfg.fusion.rrf_k, weights, doc_id_of, evidence
                )
        if matched and self.cfg.passage_match_within_page:
            fused = order_within_documents(fused, rankings["hybrid"], doc_id_of)
        if matched and self.cfg.passage_match_page_share < 1:
            per_page = math.ceil(self.cfg.passage_match_page_share * k)
            fused = spread_documents(fused, k, per_page, doc_id_of)
        return fused

    def _rankings(
        self, query: Query, trace: Trace, k: int, parts: tuple[str, ...]
    ) -> dict[str, list[tuple[str, float]]]:
        """Each part's ranking. The parts are independent until the fusion, so when this
        process may use two cores the parts after the first run on worker threads beside
        it (the bridge walk fills the first part's waits on its hop encodes). Each part
        then keeps a trace of its own, absorbed in part order: the trace reads as if they
        had run one after the other."""
        retrievers = {name: self._part(name) for name in parts}

        def run(name: str, part_trace: Trace) -> list[tuple[str, float]]:
            return [(s.chunk_id, s.score) for s in retrievers[name]._retrieve(query, part_trace, k)]

        if len(parts) < 2 or budget() < 2:
            return {name: run(name, trace) for name in parts}
        traces = {name: trace.part() for name in parts}
        pending = {name: _parts_pool().submit(run, name, traces[name]) for name in parts[1:]}
        try:
            rankings = {parts[0]: run(parts[0], traces[parts[0]])}
        finally:
            wait(pending.values())  # no part outlives its question
        for name in parts:
            trace.absorb(traces[name])
        rankings.update({name: future.result() for name, future in pending.items()})  # raises
        return {name: rankings[name] for name in parts}

    def _weights(self, matched: bool) -> dict[str, float]:
        """Each part's RRF weight: `default_weights`, times `passage_match_weights` when
        passage match joined."""
        weights = dict(self.cfg.default_weights)
        if matched:
            for name, factor in self.cfg.passage_match_weights.items():
                weights[name] = weights.get(name, 1.0) * factor
        return weights

    def _fuse(
        self, rankings: dict[str, list[tuple[str, float]]], weights: dict[str, float]
    ) -> list[ScoredChunk]:
        return rrf(_cut(rankings), self.cfg.fusion.rrf_k, weights)

    def _passage_match(self, top: list[ScoredChunk], trace: Trace) -> bool:
        """Whether `hybrid` joins this question's fusion: when the graph parts' first
        chunks (`top`) mostly come from long documents. There the graph walks find the
        right page (page recall at least hybrid's on sqlite-docs) but not the passage inside
        it that answers, which the question's own dense and BM25 match does
        (docs/results.md, Ablations); on short passages hybrid only adds distractors.
        Decided per question, from the pages this question reaches, so a collection that
        mixes long pages with short passages gets each where it helps, and no user flag is
        needed."""
        if self.cfg.passage_match == "on":
            trace.notes.append("passage match: hybrid joins the fusion (passage_match=on)")
            return True
        if not top:
            return False
        sizes = self.engine.document_sizes()
        median = statistics.median(sizes.get(doc_id_of(s.chunk_id), 1) for s in top)
        if median < self.cfg.passage_match_chunks:
            return False
        trace.notes.append(
            f"passage match: hybrid joins the fusion (the graph's top {len(top)} chunks come "
            f"from documents of {median:.0f} chunks, median; threshold "
            f"{self.cfg.passage_match_chunks:g})"
        )
        return True

    def _finish(self, query: Query, result: RetrievalResult) -> None:
        if "literag" in self.parts():
            self._part("literag")._finish(query, result)
