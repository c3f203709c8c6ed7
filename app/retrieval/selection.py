"""SpectRAG's greedy, token-budgeted context selection, usable after any ranking.

Given relevance s(c) for a candidate set, pick chunks under a budget B:
  1. a protected core: the `core_size` most relevant chunks (if they fit);
  2. a tail, one chunk at a time, maximising
        U(c) = [a·s(c) + b·Prox(c) + c·ClusterGain(c) + d·DocGain(c) − λ·Red(c)] / len(c)^ρ
     where Prox is spectral proximity to the selected set, ClusterGain / DocGain reward a
     community / document not yet covered, Red is the max cosine to what is selected;
  3. backfill: any budget left goes to the next most relevant chunks that fit.
The selection is the context; the ranking keeps its relevance order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.retrieval.base import RetrievalContext, ScoredChunk, Trace
from app.retrieval.config import SpectragConfig
from graph.types import ChunkView


@dataclass(slots=True)
class Candidate:
    chunk: ChunkView
    relevance: float
    embedding: np.ndarray
    spectral: np.ndarray | None


def _unit(v: np.ndarray | None) -> np.ndarray | None:
    if v is None:
        return None
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def select(
    candidates: Sequence[Candidate], cfg: SpectragConfig, budget: int, trace: Trace
) -> list[int]:
    """Indices into `candidates`, in selection order."""
    order = sorted(range(len(candidates)), key=lambda i: -candidates[i].relevance)
    chosen: list[int] = []
    used = 0
    docs: set[str] = set()
    communities: set[int] = set()

    def take(i: int) -> None:
        nonlocal used
        chosen.append(i)
        used += max(candidates[i].chunk.n_tokens, 1)
        docs.add(candidates[i].chunk.doc_id)
        if candidates[i].chunk.community is not None:
            communities.add(candidates[i].chunk.community)

    def fits(i: int) -> bool:
        return used + max(candidates[i].chunk.n_tokens, 1) <= budget

    for i in order[: cfg.core_size]:
        if fits(i):
            take(i)
    emb = np.stack([c.embedding for c in candidates]) if candidates else np.zeros((0, 1))
    spectral = [_unit(c.spectral) for c in candidates]
    top_rel = max((c.relevance for c in candidates), default=1.0) or 1.0
    while True:
        remaining = [i for i in order if i not in chosen and fits(i)]
        if not remaining:
            break
        best, best_u = -1, -np.inf
        sel_emb = emb[chosen] if chosen else None
        centroid = _centroid([spectral[i] for i in chosen])
        for i in remaining:
            c = candidates[i]
            red = float((sel_emb @ emb[i]).max()) if sel_emb is not None else 0.0
            prox = 0.0
            if centroid is not None and spectral[i] is not None:
                prox = max(0.0, float(centroid @ spectral[i]))
            cluster = (
                1.0
                if c.chunk.community is not None and c.chunk.community not in communities
                else 0.0
            )
            doc = 1.0 if c.chunk.doc_id not in docs else 0.0
            u = (
                cfg.a_relevance * c.relevance / top_rel
                + cfg.b_proximity * prox
                + cfg.c_cluster * cluster
                + cfg.d_document * doc
                - cfg.lam_redundancy * red
            ) / max(c.chunk.n_tokens, 1) ** cfg.rho_length
            if u > best_u:
                best, best_u = i, u
        if best_u <= 0 and chosen:
            break
        take(best)
    for i in order:  # backfill
        if i not in chosen and fits(i):
            take(i)
    trace.tokens_used = used
    trace.budget = budget
    return chosen


def _centroid(vectors: list[np.ndarray | None]) -> np.ndarray | None:
    present = [v for v in vectors if v is not None]
    if not present:
        return None
    return _unit(np.mean(present, axis=0))


def budgeted(
    engine: RetrievalContext,
    ranking: list[ScoredChunk],
    cfg: SpectragConfig,
    trace: Trace,
    depth: int = 60,
) -> list[ScoredChunk]:
    """Mark the chunks the budgeted selection picks from the head of `ranking` (signal
    `selected`); they are the context. The ranking keeps its relevance order: selection
    decides what fits the budget, not how relevant a chunk is."""
    head = ranking[:depth]
    if not head:
        return ranking
    with trace.step("budgeted selection", budget=cfg.budget_tokens) as info:
        views = {c.id: c for c in engine.store.get_chunks([s.chunk_id for s in head])}
        head = [s for s in head if s.chunk_id in views]
        ids = [s.chunk_id for s in head]
        vectors = engine.dense.vectors(ids)
        spectral = engine.store.chunk_vectors("spectral", ids)
        cands = [
            Candidate(views[s.chunk_id], s.score, vectors[i], spectral.get(s.chunk_id))
            for i, s in enumerate(head)
        ]
        picked = select(cands, cfg, cfg.budget_tokens, trace)
        info.update(selected=len(picked), tokens=trace.tokens_used)
    for i in picked:
        head[i].signals["selected"] = 1.0
    return ranking
