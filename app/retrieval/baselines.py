"""Baselines measured beside the graph modes: dense (FAISS), BM25, and their RRF hybrid."""

from __future__ import annotations

from app.retrieval.base import Query, Retriever, ScoredChunk, Trace
from app.retrieval.fusion import Ranking, fuse

DEPTH = 50


def dense_ranking(query: Query, k: int) -> Ranking:
    return query.engine.dense.search(query.embedding, k)


def bm25_ranking(query: Query, k: int) -> Ranking:
    return query.engine.lexical.top_k(query.tokens, k) if query.tokens else []


class DenseRetriever(Retriever):
    name = "dense"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        with trace.step("dense search"):
            hits = dense_ranking(query, max(k, DEPTH))
        return [ScoredChunk(c, s, {"dense": s}) for c, s in hits]


class Bm25Retriever(Retriever):
    name = "bm25"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        with trace.step("bm25 search"):
            hits = bm25_ranking(query, max(k, DEPTH))
        return [ScoredChunk(c, s, {"bm25": s}) for c, s in hits]


class HybridRetriever(Retriever):
    name = "hybrid"

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        depth = max(k, DEPTH)
        with trace.step("dense search"):
            dense = dense_ranking(query, depth)
        with trace.step("bm25 search"):
            lexical = bm25_ranking(query, depth)
        with trace.step("fusion", method=self.cfg.fusion.method):
            return fuse({"dense": dense, "bm25": lexical}, self.cfg.fusion)
