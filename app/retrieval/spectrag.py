"""SpectRAG: hybrid seeding, graph expansion, relevance diffusion plus spectral proximity,
and token-budgeted selection.

  1. seeds: RRF over FAISS, BM25, utility-question matching and title linking (K ≫ k);
  2. candidates: the seeds' neighbourhood in the RELATED graph, two hops, strongest edges
     first, capped at 200 chunks;
  3. relevance: query cosine and seed rank, diffused by personalised PageRank over the
     candidate subgraph (GDS server-side on Neo4j);
  4. context: greedy selection under the token budget (app/retrieval/selection.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.retrieval.base import Query, RetrievalContext, Retriever, ScoredChunk, Trace
from app.retrieval.fusion import rrf
from app.retrieval.selection import budgeted
from graph.types import ChunkView


def expand(engine: RetrievalContext, seeds: Sequence[str], hops: int, cap: int) -> list[str]:
    """Breadth-first over RELATED, strongest edges first, until `cap` chunks. Only chunks
    of the published index: during a re-ingest the stored graph may already link chunks
    the search indexes do not hold yet."""
    indexed = engine.indexed
    members = [c for c in dict.fromkeys(seeds) if c in indexed][:cap]
    seen = set(members)
    frontier = members
    for _ in range(hops):
        if len(members) >= cap or not frontier:
            break
        edges = engine.store.neighbours(frontier, kinds=["RELATED"])
        best: dict[str, float] = {}
        for e in edges:
            for a, b in ((e.src, e.dst), (e.dst, e.src)):
                if a in frontier and b not in seen and b in indexed:
                    best[b] = max(best.get(b, 0.0), e.weight)
        nxt = sorted(best, key=lambda c: (-best[c], c))[: cap - len(members)]
        members += nxt
        seen.update(nxt)
        frontier = nxt
    return members


def _norm(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {c: s / top for c, s in scores.items()} if top > 0 else {c: 0.0 for c in scores}


class SpectragRetriever(Retriever):
    name = "spectrag"

    def _seed_ranking(self, query: Query, trace: Trace) -> list[ScoredChunk]:
        """Hybrid seeds by RRF over dense, BM25 and utility-question matching."""
        k_seed = self.cfg.spectrag.seed_k
        with trace.step("hybrid seeding", k=k_seed) as info:
            links = self.engine.links
            linked = [links.first_chunk[d] for d in links.find(query.text)]
            rankings = {
                "linked": [(c, 1.0) for c in linked],
                "dense": self.engine.dense.search(query.embedding, k_seed),
                "bm25": self.engine.lexical.top_k(query.tokens, k_seed) if query.tokens else [],
                "utility": self.engine.utility.top_k(query.tokens, k_seed) if query.tokens else [],
            }
            seeds = rrf(rankings, self.cfg.fusion.rrf_k)[:k_seed]
            info.update({name: len(r) for name, r in rankings.items()})
        return seeds

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        seeds = self._seed_ranking(query, trace)
        return self.diffuse_and_select(query, seeds, trace)

    def diffuse_and_select(
        self, query: Query, seeds: list[ScoredChunk], trace: Trace
    ) -> list[ScoredChunk]:
        """Steps 2–4 for any seed ranking (TIGRAG's, in the composed mode)."""
        cfg = self.cfg.spectrag
        if not seeds:
            return []
        seed_score = _norm({s.chunk_id: s.score for s in seeds})
        with trace.step("graph expansion", hops=cfg.expand_hops, cap=cfg.expand_cap) as info:
            candidates = expand(self.engine, list(seed_score), cfg.expand_hops, cfg.expand_cap)
            info["candidates"] = len(candidates)
        trace.candidates = len(candidates)
        with trace.step("relevance diffusion") as info:
            sources = list(seed_score)[: max(5, len(seed_score) // 4)]
            algorithms = self.engine.settings.algorithms
            ppr = self.engine.store.chunk_ppr({c: 1.0 for c in sources}, candidates, algorithms)
            # Only what flowed in over edges counts as support: each source starts with the
            # restart mass 1 − d, which says nothing about how connected it is.
            restart = 1.0 - algorithms.ppr_damping
            diffusion = _norm(
                {c: max(0.0, s - (restart if c in sources else 0.0)) for c, s in ppr.items()}
            )
            info["diffused"] = len(ppr)
        with trace.step("scoring"):
            vectors = self.engine.dense.vectors(candidates)
            cos = np.clip(vectors @ query.embedding, 0.0, 1.0) if len(candidates) else np.zeros(0)
            w = cfg.diffusion_weight
            scored = []
            for i, c in enumerate(candidates):
                base = 0.5 * float(cos[i]) + 0.5 * seed_score.get(c, 0.0)
                # Diffusion lifts what the graph connects to the seeds (bridges); it does
                # not reorder the seeds, whose own evidence is already in `base`.
                lift = w * diffusion.get(c, 0.0) if c not in seed_score else 0.0
                rel = base + lift
                signals = {
                    "cosine": float(cos[i]),
                    "seed": seed_score.get(c, 0.0),
                    "diffusion": diffusion.get(c, 0.0),
                }
                scored.append(ScoredChunk(c, rel, signals))
            scored.sort(key=lambda s: -s.score)
        trace.pool = len(scored)
        return budgeted(self.engine, scored, cfg, trace)

    def _select(
        self, query: Query, ranking: list[ScoredChunk], trace: Trace, k: int
    ) -> list[ChunkView]:
        chosen = [s.chunk_id for s in ranking if s.signals.get("selected")]
        return self.engine.store.get_chunks(chosen)
