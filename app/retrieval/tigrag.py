"""TIGRAG: token-graph PPR expansion, BM25-weighted candidate scoring, entity-driven hops.

One round, for a token set T, rerank vectors R and linked documents L:
  1. seeds = T ∩ graph; PPR on the token graph from the seeds (GDS or in-process);
  2. p̂ = the top-γ tokens' scores, L1-normalised (the degree ablation ranks the seeds'
     co-occurrence neighbours by weighted degree instead);
  3. ρ(c) = Σ_v p̂(v)·BM25(v, c): one sparse mat-vec over the precomputed BM25 weights;
     every chunk holding a query or expanded token is a candidate;
  4. the pool = best candidates until their cumulative ρ reaches th of the total, plus the
     first chunks of the documents in L (documents whose title the text names: LLM-free
     entity linking) at the top ρ;
  5. rerank the pool by max_r cos(r, c), blended with the normalised ρ.
Hops: the unseen entities of the top ι chunks (from the second hop on, when the question
names several documents, those no hop has expanded yet go first) — titles of the documents
they cite first, then their NER mentions — extend the query; each hop reranks with
{M(q ⊕ e)} and links the entities to documents; hop scores merge by max. Stops when a hop
brings no new entity.

Each round's rerank vectors are encoded on a worker thread while the token PPR and the
candidate scoring run (on Neo4j the PPR is a server round trip; torch releases the GIL), so
the embedding model's time mostly hides behind the graph work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache, partial

import numpy as np

from app.retrieval.base import Query, Retriever, ScoredChunk, Trace
from app.retrieval.config import TigragConfig
from app.retrieval.hop_table import HopRead, hop_reads
from app.retrieval.links import doc_id_of
from graph.lexical import WeightedTop

POOL_FLOOR = 0.5  # candidates outside the pool rank below every pooled chunk
MAX_HOP_ENTITIES = 4


@cache
def _encoder_thread() -> ThreadPoolExecutor:
    """One worker per process: the embedder serialises its calls anyway."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="tigrag-encode")


Pending = Future[tuple[np.ndarray, float]]


def _encode_async(fn: Callable[..., np.ndarray], *args: object) -> Pending:
    """Start `fn(*args)` on the encoder thread; the result carries its own duration (ms)."""

    def run() -> tuple[np.ndarray, float]:
        t0 = time.perf_counter()
        return fn(*args), (time.perf_counter() - t0) * 1000

    return _encoder_thread().submit(run)


class TigragRetriever(Retriever):
    name = "tigrag"

    @property
    def tcfg(self) -> TigragConfig:
        return self.cfg.tigrag

    def default_k(self) -> int:
        return self.tcfg.beta

    def warm(self) -> None:
        """The token graph PageRank runs on (built per published graph version) and, on a
        server, the hop table's copy."""
        reads = hop_reads(self.engine)
        if reads is not None:
            reads.start()
        token = self.engine.lexical.any_term()
        if token is not None:
            self.engine.store.warm_token_ppr(self.engine.settings.algorithms, token)

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        links = self.engine.links
        with trace.step("title linking") as info:
            linked = links.find(query.text)
            info["documents"] = [links.title[d] for d in linked]
        merged: dict[str, ScoredChunk] = {}
        # the documents the question names (none when title linking is off)
        named, expanded_docs = set(linked if self.tcfg.title_links else ()), set[str]()
        vectors = _encode_async(lambda: query.embedding[None, :])
        first = self._round(query.tokens, vectors, linked, trace, hop=0)
        _merge_max(merged, first)
        seen = set(self.engine.analyzer.all_words(query.text))
        used: set[str] = set()
        for hop in range(1, self.tcfg.hops + 1):
            ranked = sorted(merged.values(), key=lambda s: -s.score)
            fresh = [s.chunk_id for s in ranked if s.chunk_id not in used]
            order = self._named_first(fresh, named, expanded_docs, hop) or fresh
            top = order[: self.tcfg.hop_chunks]
            if not top:
                break
            used.update(top)
            expanded_docs.update(doc_id_of(c) for c in top)
            with trace.step("hop entities", hop=hop, chunks=top) as info:
                table = hop_reads(self.engine)
                info["reads"] = "table" if table is not None and table.ready else "store"
                read = table if table is not None else self.engine.store.citations_and_mentions
                entities = self._hop_entities(top, seen, read)
                info["entities"] = list(entities)
            if not entities:
                trace.hops.append({"hop": hop, "chunks": top, "entities": [], "stopped": True})
                break
            for name in entities:
                seen.update(self.engine.analyzer.all_words(name))
            hop_linked = sorted({d for docs in entities.values() for d in docs})
            expanded = f"{query.text} {' '.join(entities)}"
            vectors = _encode_async(self._hop_vectors, query, list(entities))
            tokens = self.engine.analyzer.tokens(expanded)
            result = self._round(tokens, vectors, hop_linked, trace, hop=hop)
            trace.hops.append(
                {"hop": hop, "chunks": top, "entities": list(entities), "candidates": len(result)}
            )
            _merge_max(merged, result)
        return self._named_on_top(sorted(merged.values(), key=lambda s: -s.score), named)

    def _named_on_top(self, ranked: list[ScoredChunk], named: set[str]) -> list[ScoredChunk]:
        """The first chunks of the documents the question names by title go first, in
        their own order (`named_on_top`): the question says they matter, while pages a hop
        links (the four Peter Pan adaptations Barrie's page cites) only may."""
        if not self.tcfg.named_on_top or not named or not ranked:
            return ranked
        firsts = {c for d in named if (c := self.engine.links.first_chunk.get(d)) is not None}
        top = ranked[0].score
        lifted = [
            ScoredChunk(s.chunk_id, top + s.score, {**s.signals, "named": 1.0})
            if s.chunk_id in firsts
            else s
            for s in ranked
        ]
        return sorted(lifted, key=lambda s: -s.score)

    def _named_first(
        self, fresh: list[str], named: set[str], expanded: set[str], hop: int
    ) -> list[str]:
        """From the second hop on, when the question names two documents or more (title
        linking), the chunks of those no hop has expanded yet, in rank order. "Which film's
        director is older, A or B?" names two films: hop 1 expands A and finds its
        director, whose page then ranks high; hop 2 must expand B, not A's director
        (`hop_named_first`). A question naming one document needs no such turn: on
        sqlite-docs that cost a page (docs/results.md, Ablations)."""
        if hop < 2 or len(named) < 2 or not self.tcfg.hop_named_first:
            return []
        return [c for c in fresh if (d := doc_id_of(c)) in named and d not in expanded]

    def _hop_vectors(self, query: Query, entities: list[str]) -> np.ndarray:
        """The rerank set {M(q ⊕ e)}: embedded jointly, or as M(q) + M(e) (cheaper)."""
        encode = partial(self.engine.encode_queries, int8=self.tcfg.hop_encoder == "int8")
        if self.tcfg.hop_rerank == "joint":
            return encode([f"{query.text} {e}" for e in entities])
        vectors = encode(entities) + query.embedding[None, :]
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def _token_weights(self, tokens: list[str], trace: Trace, hop: int) -> dict[str, float]:
        held = self.engine.known_tokens(tokens)
        seeds = {t: 1.0 for t in dict.fromkeys(tokens) if t in held}
        if not seeds:
            return {}
        with trace.step("token ppr", hop=hop, seeds=len(seeds)) as info:
            if self.tcfg.centrality == "degree":
                raw = self.engine.store.token_neighbourhood(list(seeds), self.tcfg.gamma)
            else:
                raw = self.engine.store.token_ppr(
                    seeds, self.engine.settings.algorithms, top_k=self.tcfg.gamma
                )
            floor = min(raw.values(), default=1.0)
            for t in seeds:
                raw.setdefault(t, floor)
            total = sum(raw.values())
            weights = {t: w / total for t, w in raw.items()} if total > 0 else {}
            info["expanded"] = len(weights)
        if hop == 0:
            ordered = sorted(weights.items(), key=lambda x: -x[1])
            trace.expanded_tokens = {t: round(w, 5) for t, w in ordered}
        return weights

    def _round(
        self,
        tokens: list[str],
        pending: Pending,
        linked_docs: list[str],
        trace: Trace,
        hop: int,
    ) -> dict[str, ScoredChunk]:
        """`pending` computes this round's rerank vectors; it is awaited only to rerank."""
        try:
            return self._score_round(tokens, pending, linked_docs, trace, hop)
        finally:
            pending.result()  # never leave an encode running past the round

    def _await(self, pending: Pending, trace: Trace, hop: int) -> np.ndarray:
        with trace.step("query embeddings" if hop == 0 else "hop embeddings", hop=hop) as info:
            vectors, encode_ms = pending.result()
            info.update(n=len(vectors), encode_ms=round(encode_ms, 2))
        return vectors

    def _score_round(
        self,
        tokens: list[str],
        pending: Pending,
        linked_docs: list[str],
        trace: Trace,
        hop: int,
    ) -> dict[str, ScoredChunk]:
        cfg = self.tcfg
        lexical = self.engine.lexical
        weights = self._token_weights(tokens, trace, hop)
        linked = [
            c
            for d in (linked_docs if cfg.title_links else [])
            if (c := self.engine.links.first_chunk.get(d)) is not None
        ]
        if not weights and not linked:
            return self._dense_fallback(self._await(pending, trace, hop), trace, hop)
        with trace.step("candidate scoring", hop=hop) as info:
            # The pool never exceeds pool_max, so only that many need ordering; the mass
            # cut compares their running sum with the share of every candidate's mass.
            top = (
                lexical.weighted_top(weights, cfg.pool_max, presence=not cfg.use_bm25)
                if weights
                else WeightedTop.empty()
            )
            mass = np.cumsum(top.scores)
            cut = int(np.searchsorted(mass, cfg.pool_mass * top.total)) + 1 if len(mass) else 0
            cut = max(min(cut, cfg.pool_max), min(cfg.pool_min, top.candidates))
            info.update(candidates=top.candidates, pool=cut, linked=len(linked))
        top_rho = float(top.scores[0]) if len(top.ids) else 1.0
        norm = {c: float(r) / top_rho for c, r in zip(top.ids, top.scores, strict=True)}
        pool_ids = list(dict.fromkeys([*linked, *top.ids[:cut]]))
        if hop == 0:
            outside = sum(1 for c in set(linked) if not top.scored(c))
            trace.candidates = top.candidates + outside
            trace.pool = len(pool_ids)
        rerank = self._await(pending, trace, hop)
        out: dict[str, ScoredChunk] = {}
        with trace.step("rerank", hop=hop, pool=len(pool_ids)):
            cos = self._cosine(pool_ids, rerank) if cfg.rerank else np.zeros(len(pool_ids))
            lam = cfg.rerank_weight if cfg.rerank else 0.0
            for i, cid in enumerate(pool_ids):
                r = 1.0 if cid in linked else norm.get(cid, 0.0)
                score = POOL_FLOOR + (1 - POOL_FLOOR) * ((1 - lam) * r + lam * float(cos[i]))
                signals = {"rho": r, "cosine": float(cos[i]), "hop": hop}
                if cid in linked:
                    signals["linked"] = 1.0
                out[cid] = ScoredChunk(cid, score, signals)
            for cid, r in norm.items():
                if cid not in out:
                    out[cid] = ScoredChunk(cid, POOL_FLOOR * r, {"rho": r, "hop": hop})
        return out

    def _cosine(self, ids: list[str], rerank: np.ndarray) -> np.ndarray:
        if not ids:
            return np.zeros(0)
        sims = self.engine.dense.vectors(ids) @ rerank.T
        return sims.max(axis=1)

    def _dense_fallback(self, rerank: np.ndarray, trace: Trace, hop: int) -> dict[str, ScoredChunk]:
        """No question word is in the graph: rank by meaning alone rather than return nothing."""
        if hop == 0:
            trace.notes.append("no question token in the token graph; ranked by embedding only")
        with trace.step("dense fallback", hop=hop):
            hits = self.engine.dense.search(rerank[0], self.tcfg.pool_max)
        return {c: ScoredChunk(c, POOL_FLOOR * s, {"cosine": s, "hop": hop}) for c, s in hits}

    def _hop_entities(
        self, chunk_ids: list[str], seen: set[str], read: Callable[[list[str]], HopRead]
    ) -> dict[str, list[str]]:
        """Entity name → the documents it links to, for entities of these chunks that the
        question has not named yet: titles of the documents the chunks cite first (known
        documents), then NER mentions that hold an indexed word. `read` gives the chunks'
        CITES edges and mentions (the hop table, or the store)."""
        links = self.engine.links
        edges, mentions = read(chunk_ids)
        cites: dict[str, list[tuple[float, str]]] = {}
        for e in edges:
            cites.setdefault(e.src, []).append((-e.weight, e.dst))
        out: dict[str, list[str]] = {}
        for cid in chunk_ids:  # rank order, strongest citation first: the same on every backend
            for _, dst in sorted(cites.get(cid, [])):
                doc = doc_id_of(dst)
                if (title := links.title.get(doc)) is not None:
                    out.setdefault(title, []).append(doc)
        for cid in chunk_ids:
            for m in sorted(mentions.get(cid, []), key=lambda m: (-m.count, m.name)):
                out.setdefault(m.name.strip(), links.find(m.name))
        kept: dict[str, list[str]] = {}
        words_of = {name: self.engine.analyzer.tokens(name) for name in out}
        held = self.engine.known_tokens(w for words in words_of.values() for w in words)
        for name, docs in out.items():
            words = words_of[name]
            if not name or not words or not any(w in held for w in words):
                continue
            if set(self.engine.analyzer.all_words(name)) <= seen:
                continue
            kept[name] = docs
            if len(kept) >= MAX_HOP_ENTITIES:
                break
        return kept


def _merge_max(into: dict[str, ScoredChunk], new: dict[str, ScoredChunk]) -> None:
    for cid, item in new.items():
        old = into.get(cid)
        if old is None or item.score > old.score:
            into[cid] = item
