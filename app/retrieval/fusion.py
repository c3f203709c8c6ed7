"""Score fusion: reciprocal-rank fusion and weighted sums of normalised scores.

Inputs are named rankings (signal name → [(chunk id, score)], best first); the output keeps
every signal's contribution so traces and the UI can show where a chunk's score came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from app.retrieval.base import ScoredChunk
from app.retrieval.config import FusionConfig

Ranking = Sequence[tuple[str, float]]


def rrf(
    rankings: Mapping[str, Ranking], k: int = 60, weights: Mapping[str, float] | None = None
) -> list[ScoredChunk]:
    """Σ_signal w_signal / (k + rank), w = 1 unless given; ties broken by first appearance."""
    fused: dict[str, ScoredChunk] = {}
    for name, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (chunk_id, score) in enumerate(ranking, start=1):
            item = fused.setdefault(chunk_id, ScoredChunk(chunk_id, 0.0))
            item.score += w / (k + rank)
            item.signals[name] = float(score)
    return sorted(fused.values(), key=lambda s: -s.score)


def with_document_evidence(
    ranking: Sequence[ScoredChunk],
    rankings: Mapping[str, Ranking],
    k: int,
    weights: Mapping[str, float],
    document_of: Callable[[str], str],
    scale: float = 1.0,
) -> list[ScoredChunk]:
    """The chunk ranking re-scored with its documents' RRF: each signal's document ranking
    (a document at its best chunk's place) adds scale · w / (k + rank) to every chunk of
    that document (signal `page`). Chunk-level RRF splits a long document's evidence over
    its passages (one signal's best chunk there is not another's); this pools it per
    document, as passage retrieval over long pages does, while a chunk's own score still
    orders chunks of one document and breaks near-ties between documents."""
    documents = {
        name: [(doc, 0.0) for doc in dict.fromkeys(document_of(c) for c, _ in chunk_ranking)]
        for name, chunk_ranking in rankings.items()
    }
    document_score = {d.chunk_id: scale * d.score for d in rrf(documents, k, weights)}
    rescored = []
    for item in ranking:
        page = document_score.get(document_of(item.chunk_id), 0.0)
        rescored.append(
            ScoredChunk(item.chunk_id, item.score + page, {**item.signals, "page": page})
        )
    return sorted(rescored, key=lambda s: -s.score)


def spread_documents(
    ranking: Sequence[ScoredChunk], k: int, per_document: int, document_of: Callable[[str], str]
) -> list[ScoredChunk]:
    """The ranking with at most `per_document` chunks of one document among its first `k`;
    the chunks held back keep their order right after them. Document order (first
    appearance) is unchanged, so page recall is too: only which passages fill the context."""
    head: list[ScoredChunk] = []
    held: list[ScoredChunk] = []
    taken: dict[str, int] = {}
    for i, item in enumerate(ranking):
        if len(head) == k:
            return head + held + list(ranking[i:])
        doc = document_of(item.chunk_id)
        if taken.get(doc, 0) < per_document:
            taken[doc] = taken.get(doc, 0) + 1
            head.append(item)
        else:
            held.append(item)
    return head + held


def order_within_documents(
    ranking: Sequence[ScoredChunk], order: Ranking, document_of: Callable[[str], str]
) -> list[ScoredChunk]:
    """The ranking with each document's chunks re-dealt into that document's own slots in
    `order`'s order (chunks `order` leaves out keep their relative order after those it
    ranks). Which document holds each position is unchanged, so page order and page recall
    are too: one ranking decides the pages, another which of a page's passages come first."""
    position = {chunk_id: i for i, (chunk_id, _) in enumerate(order)}
    by_document: dict[str, list[ScoredChunk]] = {}
    for item in ranking:
        by_document.setdefault(document_of(item.chunk_id), []).append(item)
    queues = {
        doc: iter(sorted(items, key=lambda s: position.get(s.chunk_id, len(position))))
        for doc, items in by_document.items()
    }
    return [next(queues[document_of(item.chunk_id)]) for item in ranking]


def minmax(ranking: Ranking) -> dict[str, float]:
    if not ranking:
        return {}
    scores = [s for _, s in ranking]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    return {c: (s - lo) / span if span > 0 else 1.0 for c, s in ranking}


def weighted(rankings: Mapping[str, Ranking], weights: Mapping[str, float]) -> list[ScoredChunk]:
    """Σ_signal w_signal · minmax(score); a chunk missing from a signal gets 0 from it."""
    fused: dict[str, ScoredChunk] = {}
    for name, ranking in rankings.items():
        w = weights.get(name, 1.0)
        for chunk_id, norm in minmax(ranking).items():
            item = fused.setdefault(chunk_id, ScoredChunk(chunk_id, 0.0))
            item.score += w * norm
            item.signals[name] = norm
    return sorted(fused.values(), key=lambda s: -s.score)


def fuse(rankings: Mapping[str, Ranking], cfg: FusionConfig) -> list[ScoredChunk]:
    if cfg.method == "rrf":
        return rrf(rankings, cfg.rrf_k)
    return weighted(rankings, cfg.weights)
