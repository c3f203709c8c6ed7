"""TIGRAG: token-graph PPR expansion, BM25-weighted candidate scoring, entity-driven hops.

One round, for a token set T and rerank vectors R:
  1. seeds = T ∩ graph; PPR on the token graph from the seeds (GDS or in-process);
  2. p̂ = the top-γ tokens' scores, L1-normalised (the degree ablation uses weighted
     co-occurrence degree instead of PPR);
  3. ρ(c) = Σ_v p̂(v)·BM25(v, c): one sparse mat-vec over the precomputed BM25 weights;
     every chunk holding a query or expanded token is a candidate;
  4. the pool = best candidates until their cumulative ρ reaches th of the total;
  5. rerank the pool by max_r cos(r, c), blended with the normalised ρ.
Hops: the unseen entities of the top ι chunks (NER mentions, and the titles of the documents
they cite) extend the query; each hop reranks with {M(q ⊕ e)}; hop scores merge by max.
Stops when a hop brings no new entity.
"""

from __future__ import annotations

import numpy as np

from app.retrieval.base import Query, Retriever, ScoredChunk, Trace
from app.retrieval.config import TigragConfig

POOL_FLOOR = 0.5  # candidates outside the pool rank below every pooled chunk


class TigragRetriever(Retriever):
    name = "tigrag"

    @property
    def tcfg(self) -> TigragConfig:
        return self.cfg.tigrag

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        merged: dict[str, ScoredChunk] = {}
        first = self._round(query.tokens, query.embedding[None, :], trace, hop=0)
        _merge_max(merged, first)
        seen = {w for w in self.engine.analyzer.all_words(query.text)}
        used: set[str] = set()
        for hop in range(1, self.tcfg.hops + 1):
            ranked = sorted(merged.values(), key=lambda s: -s.score)
            top = [s.chunk_id for s in ranked if s.chunk_id not in used][: self.tcfg.hop_chunks]
            if not top:
                break
            used.update(top)
            with trace.step("hop entities", hop=hop, chunks=top) as info:
                entities = self._hop_entities(top, seen)
                info["entities"] = entities
            if not entities:
                trace.hops.append({"hop": hop, "chunks": top, "entities": [], "stopped": True})
                break
            for e in entities:
                seen.update(self.engine.analyzer.all_words(e))
            expanded = f"{query.text} {' '.join(entities)}"
            with trace.step("hop embeddings", hop=hop, n=len(entities)):
                vectors = self.engine.embedder.encode([f"{query.text} {e}" for e in entities])
            tokens = self.engine.analyzer.tokens(expanded)
            result = self._round(tokens, vectors, trace, hop=hop)
            trace.hops.append(
                {"hop": hop, "chunks": top, "entities": entities, "candidates": len(result)}
            )
            _merge_max(merged, result)
        return sorted(merged.values(), key=lambda s: -s.score)

    def _token_weights(self, tokens: list[str], trace: Trace, hop: int) -> dict[str, float]:
        seeds = {t: 1.0 for t in dict.fromkeys(tokens) if self.engine.has_token(t)}
        if not seeds:
            return {}
        with trace.step("token ppr", hop=hop, seeds=len(seeds)) as info:
            if self.tcfg.centrality == "degree":
                raw = self.engine.store.token_neighbourhood(list(seeds), self.tcfg.gamma)
            else:
                raw = self.engine.store.token_ppr(
                    seeds, self.engine.settings.algorithms, top_k=self.tcfg.gamma
                )
            for t in seeds:
                raw.setdefault(t, min(raw.values(), default=1.0))
            total = sum(raw.values())
            weights = {t: w / total for t, w in raw.items()} if total > 0 else {}
            info["expanded"] = len(weights)
        if hop == 0:
            trace.expanded_tokens = {
                t: round(w, 5) for t, w in sorted(weights.items(), key=lambda x: -x[1])
            }
        return weights

    def _round(
        self, tokens: list[str], rerank: np.ndarray, trace: Trace, hop: int
    ) -> dict[str, ScoredChunk]:
        cfg = self.tcfg
        lexical = self.engine.lexical
        weights = self._token_weights(tokens, trace, hop)
        if not weights:
            return self._dense_fallback(rerank, trace, hop)
        with trace.step("candidate scoring", hop=hop) as info:
            if cfg.use_bm25:
                rho = lexical.weighted_scores(weights)
            else:
                rho = lexical.weighted_presence(weights)
            candidates = np.flatnonzero(rho > 0)
            order = candidates[np.argsort(-rho[candidates], kind="stable")]
            mass = np.cumsum(rho[order])
            cut = int(np.searchsorted(mass, cfg.pool_mass * mass[-1])) + 1 if len(mass) else 0
            cut = max(min(cut, cfg.pool_max), min(cfg.pool_min, len(order)))
            pool = order[:cut]
            info.update(candidates=len(candidates), pool=len(pool))
        if hop == 0:
            trace.candidates, trace.pool = len(candidates), len(pool)
        if len(pool) == 0:
            return {}
        top_rho = float(rho[pool[0]])
        ids = [lexical.chunk_ids[i] for i in order[: max(cfg.pool_max, len(pool))]]
        out: dict[str, ScoredChunk] = {}
        with trace.step("rerank", hop=hop, pool=len(pool)):
            pool_ids = ids[: len(pool)]
            cos = self._cosine(pool_ids, rerank) if cfg.rerank else np.zeros(len(pool_ids))
            lam = cfg.rerank_weight if cfg.rerank else 0.0
            for i, cid in enumerate(pool_ids):
                r = float(rho[pool[i]]) / top_rho
                score = POOL_FLOOR + (1 - POOL_FLOOR) * ((1 - lam) * r + lam * float(cos[i]))
                out[cid] = ScoredChunk(cid, score, {"rho": r, "cosine": float(cos[i]), "hop": hop})
            for j, cid in enumerate(ids[len(pool) :], start=len(pool)):
                r = float(rho[order[j]]) / top_rho
                out[cid] = ScoredChunk(cid, POOL_FLOOR * r, {"rho": r, "hop": hop})
        return out

    def _cosine(self, ids: list[str], rerank: np.ndarray) -> np.ndarray:
        vectors = self.engine.dense.vectors(ids)
        sims = vectors @ rerank.T
        return sims.max(axis=1) if sims.size else np.zeros(len(ids))

    def _dense_fallback(self, rerank: np.ndarray, trace: Trace, hop: int) -> dict[str, ScoredChunk]:
        """No question word is in the graph: rank by meaning alone rather than return nothing."""
        if hop == 0:
            trace.notes.append("no question token in the token graph; ranked by embedding only")
        with trace.step("dense fallback", hop=hop):
            hits = self.engine.dense.search(rerank[0], self.tcfg.pool_max)
        return {c: ScoredChunk(c, POOL_FLOOR * s, {"cosine": s, "hop": hop}) for c, s in hits}

    def _hop_entities(self, chunk_ids: list[str], seen: set[str]) -> list[str]:
        """Entities of the chunks that the query has not mentioned yet: NER mentions that
        hold an indexed word, and titles of documents the chunks cite."""
        names: list[str] = []
        for mentions in self.engine.store.chunk_entities(chunk_ids).values():
            names += [m.name for m in sorted(mentions, key=lambda m: -m.count)]
        cited = [
            e.dst
            for e in self.engine.store.neighbours(chunk_ids, kinds=["CITES"])
            if e.src in chunk_ids
        ]
        names += [c.title for c in self.engine.store.get_chunks(cited)]
        out: list[str] = []
        for name in dict.fromkeys(n.strip() for n in names if n.strip()):
            words = self.engine.analyzer.tokens(name)
            if not words or not any(self.engine.has_token(w) for w in words):
                continue
            if set(self.engine.analyzer.all_words(name)) <= seen:
                continue
            out.append(name)
        return out[:8]


def _merge_max(into: dict[str, ScoredChunk], new: dict[str, ScoredChunk]) -> None:
    for cid, item in new.items():
        old = into.get(cid)
        if old is None or item.score > old.score:
            into[cid] = item
