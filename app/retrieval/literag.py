"""LiteRAG: LLM-free multi-hop retrieval by anchored, thresholded graph expansion.

  1. anchors: every pooled chunk (FAISS ∪ BM25 ∪ fuzzy name matches) gets a strength in [0, 1]
     from four signals, each in [0, 1]: semantic (cosine / best cosine), lexical (BM25 / best
     BM25), fuzzy (a query n-gram matching the chunk's document title or one of its entity
     names) and community (the query's idf mass found in the chunk community's top tokens);
     the strongest `anchors` chunks start the expansion;
  2. expansion: breadth-first from the anchors, at most `max_hops` hops and `max_nodes`
     explored chunks, strongest propagated scores explored first. Propagated = parent
     relevance × edge weight × hub factor; a neighbour is kept when its relevance (mostly
     propagated, partly its own query cosine) reaches θ = min(1, max(floor, ratio × strength
     of the path's anchor)): a confident anchor admits only neighbours nearly as good as
     itself, a weak one still admits clear matches;
  3. hubs: propagation into a chunk of above-average RELATED degree is damped, a quarter as
     much inside the community it was reached from (a hub of its own topic is often the
     bridge a question asks for; one linking across topics is usually noise);
  4. ranking: kept chunks by relevance × (1 + w·log support), support = distinct anchors
     whose paths kept the chunk, never above their path's anchor; then the pooled chunks
     that were not kept, so the ranking reaches ≥ k;
  5. chains (`_finish`, written by `literag_chains`): each kept path anchor → … → chunk as
     titles joined by the typed edge kinds between consecutive chunks, with each chunk's
     sentence closest to the question, most relevant first, within `chain_budget_tokens`.

Measured choices (recall@2/@5 on the full 2wiki-dev, musique-200, hotpotqa-200 indexes):
- the edge weight is max(RELATED / the chunk's strongest RELATED, CITES weight), not RELATED
  alone: RELATED's fusion weights come from SpectRAG, where similarity dominates (SEMANTIC
  .30, CITES .083), so the citation a question hops through (a film's director, a song's
  performer) is usually a passage's weakest RELATED edge. 2Wiki R@5 82.2 → 87.0, the others
  within ±1.4;
- support: every weight tried (0.05 to 0.5) lowered R@2 on all three sets (0.1: −1.3, −1.2,
  −4.2), because the chunks many anchors reach are mostly the generic ones linking the
  question's candidates; so SUPPORT_WEIGHT ships at 0 and support is reported in the signals;
- a kept chunk never ranks above the anchor its path starts from (its evidence is no
  stronger than that start): within ±0.4 without a support boost, R@2 +0.7, +3.3, +3.8 with
  one (weight 0.1).

Per-graph tables (fuzzy name index, communities, degrees; in `literag_tables`) are built once
per graph version and shared by every LiteRAG retriever of one engine.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from typing import Any

import numpy as np

from app.retrieval.base import (
    Query,
    RetrievalContext,
    RetrievalResult,
    Retriever,
    ScoredChunk,
    Trace,
)
from app.retrieval.config import LiteragConfig
from app.retrieval.literag_chains import (
    MAX_CHAINS,
    ChainWriter,
    Reach,
    chain_paths,
    edge_labels,
)
from app.retrieval.literag_tables import (
    GraphTables,
    NameIndex,
    build_tables,
    dice,
    graph_tables,
    trigrams,
)
from graph.types import EDGE_KINDS, RELATED
from ingest.tokens import stopwords

__all__ = [
    "GraphTables",
    "LiteragRetriever",
    "NameIndex",
    "Reach",
    "build_tables",
    "dice",
    "edge_labels",
    "graph_tables",
    "hub_factor",
    "support_boost",
    "threshold",
    "trigrams",
]


# Anchor strength = Σ weight · signal (weights sum to 1, so strength is in [0, 1]). Meaning
# leads; exact and fuzzy name matches carry most of the rest (multi-hop questions name their
# entities); community overlap is a weak topical prior.
SIGNAL_WEIGHTS = {"semantic": 0.45, "lexical": 0.2, "fuzzy": 0.25, "community": 0.1}
POOL_DEPTH = 50  # FAISS and BM25 hits pooled as anchor candidates
PROPAGATION_SHARE = 0.75  # relevance = share · propagated + (1 − share) · own cosine
RELATION_BOOST = {"CITES": 1.0}  # typed kinds whose own weight may stand in for RELATED's
SAME_COMMUNITY_DISCOUNT = 0.25  # hub penalty multiplier inside the community reached from
SUPPORT_WEIGHT = 0.0  # score × (1 + weight · log support); measured best at 0 (see above)
PAD_FACTOR = 0.5  # pooled chunks that were not kept rank below kept ones of equal score
MAX_NGRAM = 6  # longest query n-gram compared with names, in words

TypedEdges = dict[frozenset[str], list[tuple[str, str, str, float]]]  # pair → (kind, src, dst, w)


# ---- pure helpers -------------------------------------------------------------------------
def threshold(strength: float, floor: float, ratio: float) -> float:
    """θ for a path started at an anchor of this strength."""
    return min(1.0, max(floor, ratio * strength))


def hub_factor(degree: float, mean_degree: float, penalty: float, same_community: bool) -> float:
    """1 / (1 + p·log(max(1, degree / mean degree))): chunks of up to average degree keep
    everything (log(1 + degree) would also damp them, so every hop would lose); p shrinks
    inside the community the path comes from."""
    p = penalty * (SAME_COMMUNITY_DISCOUNT if same_community else 1.0)
    return 1.0 / (1.0 + p * math.log(max(degree / max(mean_degree, 1e-9), 1.0)))


def support_boost(score: float, support: int) -> float:
    return score * (1.0 + SUPPORT_WEIGHT * math.log(max(support, 1)))


class LiteragRetriever(Retriever):
    name = "literag"

    def __init__(self, engine: RetrievalContext) -> None:
        super().__init__(engine)
        self._chain_writer = ChainWriter(engine)
        # The kept paths go from `_retrieve` to `_finish` (same call, same thread).
        self._local = threading.local()

    @property
    def lcfg(self) -> LiteragConfig:
        return self.cfg.literag

    def warm(self) -> None:
        graph_tables(self.engine)

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        self._local.relations = ([], [])
        if len(self.engine.dense) == 0:
            trace.notes.append("the index is empty: nothing to anchor on")
            return []
        tables = graph_tables(self.engine)
        pool, top_cos = self._anchor_pool(query, tables, trace)
        reaches, links = self._expand(query, tables, pool[: self.lcfg.anchors], top_cos, trace)
        self._local.relations = ([r for r in reaches.values() if r.parent is not None], links)
        return self._rank(pool, reaches, trace, k)

    # ---- 1. anchors -------------------------------------------------------------------------
    def _anchor_pool(
        self, query: Query, tables: GraphTables, trace: Trace
    ) -> tuple[list[ScoredChunk], float]:
        engine = self.engine
        with trace.step("anchors", k=self.lcfg.anchors) as info:
            dense = engine.dense.search(query.embedding, POOL_DEPTH)
            lexical = engine.lexical.top_k(query.tokens, POOL_DEPTH) if query.tokens else []
            fuzzy = self._fuzzy(query, tables)
            ids = list(dict.fromkeys([c for c, _ in dense] + [c for c, _ in lexical]))
            ids += sorted(set(fuzzy) - set(ids))
            cos = np.clip(engine.dense.vectors(ids) @ query.embedding, 0.0, 1.0)
            top_cos = max(float(cos.max(initial=0.0)), 1e-9)
            bm25 = engine.lexical.scores(query.tokens) if query.tokens else np.zeros(0)
            top_bm25 = float(bm25.max(initial=0.0))
            community = self._community_relevance(query, tables)
            pool = []
            for i, cid in enumerate(ids):
                pos = tables.lexical_pos.get(cid)
                lex = float(bm25[pos]) / top_bm25 if top_bm25 > 0 and pos is not None else 0.0
                signals = {
                    "semantic": float(cos[i]) / top_cos,
                    "lexical": lex,
                    "fuzzy": fuzzy.get(cid, 0.0),
                    "community": community.get(tables.community.get(cid, -1), 0.0),
                }
                strength = sum(SIGNAL_WEIGHTS[s] * v for s, v in signals.items())
                pool.append(ScoredChunk(cid, strength, signals | {"cosine": float(cos[i])}))
            pool.sort(key=lambda s: (-s.score, s.chunk_id))
            info.update(
                pool=len(pool),
                fuzzy_matches=len(fuzzy),
                anchors={s.chunk_id: round(s.score, 4) for s in pool[: self.lcfg.anchors]},
            )
        trace.candidates = len(pool)
        return pool, top_cos

    def _fuzzy(self, query: Query, tables: GraphTables) -> dict[str, float]:
        """Chunks whose document title or an entity name matches a query n-gram (exactly or
        with difflib ratio ≥ fuzzy_min_ratio), scored ratio × the name's weight there."""
        words = self.engine.analyzer.all_words(query.text)
        stop = stopwords()
        out: dict[str, float] = {}
        for n in range(1, MAX_NGRAM + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                text = " ".join(gram)
                if len(text) < 4 or all(w in stop or len(w) < 3 for w in gram):
                    continue
                for idx, sim in tables.names.lookup(text, self.lcfg.fuzzy_min_ratio):
                    for cid, weight in tables.names.chunks[idx]:
                        out[cid] = max(out.get(cid, 0.0), sim * weight)
        return out

    def _community_relevance(self, query: Query, tables: GraphTables) -> dict[int, float]:
        """Share of the query's idf mass found in each community's top tokens."""
        lexical = self.engine.lexical
        terms = [t for t in dict.fromkeys(query.tokens) if self.engine.has_token(t)]
        ids = lexical.term_ids(terms)
        idf = {t: max(float(lexical.idf[i]), 1e-6) for t, i in zip(terms, ids, strict=True)}
        total = sum(idf.values())
        if total <= 0:
            return {}
        return {
            c: sum(w for t, w in idf.items() if t in tokens) / total
            for c, tokens in tables.community_tokens.items()
        }

    # ---- 2–3. expansion with dynamic thresholds and hub penalties ----------------------------
    def _expand(
        self,
        query: Query,
        tables: GraphTables,
        anchors: list[ScoredChunk],
        top_cos: float,
        trace: Trace,
    ) -> tuple[dict[str, Reach], list[Reach]]:
        """Every kept chunk's first path, and the kept links between anchors."""
        cfg = self.lcfg
        strength = {a.chunk_id: a.score for a in anchors}
        reaches = {c: Reach(c, c, None, 0, s, support={c}) for c, s in strength.items()}
        cosine = {a.chunk_id: a.signals["semantic"] for a in anchors}
        frontier, explored = list(strength), len(strength)
        links: list[Reach] = []
        for hop in range(1, cfg.max_hops + 1):
            if not frontier or explored >= cfg.max_nodes:
                break
            with trace.step("expansion", hop=hop, frontier=len(frontier)) as info:
                moves, typed = self._moves(frontier, reaches, tables)
                new = list(dict.fromkeys(b for _, _, b in moves if b not in cosine))
                new = new[: cfg.max_nodes - explored]
                if new:
                    sims = np.clip(self.engine.dense.vectors(new) @ query.embedding, 0.0, 1.0)
                    cosine.update({c: float(s) / top_cos for c, s in zip(new, sims, strict=True)})
                    explored += len(new)
                next_frontier: list[str] = []
                kept = evaluated = 0
                thetas: set[float] = set()
                for prop, a, b in moves:
                    if b not in cosine or b in self._path_of(reaches, a):
                        continue
                    anchor = reaches[a].anchor
                    theta = threshold(strength[anchor], cfg.threshold_floor, cfg.threshold_ratio)
                    rel = PROPAGATION_SHARE * prop + (1 - PROPAGATION_SHARE) * min(cosine[b], 1.0)
                    evaluated += 1
                    thetas.add(round(theta, 4))
                    if rel < theta:
                        continue
                    kept += 1
                    reach = reaches.get(b)
                    labels = edge_labels(typed.get(frozenset((a, b)), ()), a)
                    if reach is None:
                        reach = reaches[b] = Reach(b, anchor, a, hop, rel, theta, labels)
                        next_frontier.append(b)
                    elif reach.parent is None and anchor not in reach.support:
                        links.append(Reach(b, anchor, a, hop, rel, theta, labels))
                    reach.support.add(anchor)
                trace.hops.append(self._hop_summary(hop, frontier, next_frontier, kept))
                frontier = next_frontier
                info.update(
                    explored=explored,
                    evaluated=evaluated,
                    kept=kept,
                    new=len(next_frontier),
                    thetas=sorted(thetas),
                )
        return reaches, links

    def _hop_summary(
        self, hop: int, frontier: list[str], new: list[str], kept: int
    ) -> dict[str, Any]:
        """One hop in the shape every mode's trace uses (chunks → entities → candidates);
        the entities are the titles of the newly kept chunks."""
        titles = list(dict.fromkeys(v.title for v in self.engine.store.get_chunks(new)))
        return {"hop": hop, "chunks": frontier, "entities": titles, "candidates": kept}

    def _moves(
        self, frontier: list[str], reaches: dict[str, Reach], tables: GraphTables
    ) -> tuple[list[tuple[float, str, str]], TypedEdges]:
        """(propagated score, from, to) for every edge leaving the frontier, best first, and
        the typed edges between each pair (one store call per hop)."""
        typed: TypedEdges = defaultdict(list)
        related: dict[str, list[tuple[str, float]]] = defaultdict(list)
        front = set(frontier)
        indexed = self.engine.indexed  # a re-ingest may link chunks not yet published
        for e in self.engine.store.neighbours(frontier):
            if e.kind == RELATED:
                for a, b in ((e.src, e.dst), (e.dst, e.src)):
                    if a in front and b in indexed:
                        related[a].append((b, e.weight))
            elif e.kind in EDGE_KINDS:
                typed[frozenset((e.src, e.dst))].append((e.kind, e.src, e.dst, e.weight))
        moves = []
        for a in frontier:
            edges = related.get(a, [])
            top = max((w for _, w in edges), default=0.0)
            home = tables.community.get(a)
            for b, w in edges:
                pair = typed.get(frozenset((a, b)), ())
                boost = max((RELATION_BOOST.get(k, 0.0) * x for k, _, _, x in pair), default=0.0)
                weight = max(w / top if top > 0 else 0.0, boost)
                same = home is not None and tables.community.get(b) == home
                hub = hub_factor(
                    tables.degree.get(b, 0), tables.mean_degree, self.lcfg.hub_penalty, same
                )
                moves.append((reaches[a].relevance * weight * hub, a, b))
        moves.sort(key=lambda m: (-m[0], m[1], m[2]))
        return moves, typed

    @staticmethod
    def _path_of(reaches: dict[str, Reach], node: str) -> list[str]:
        """`node` and its ancestors up to its anchor (a path never revisits them)."""
        path = [node]
        while (up := reaches[path[-1]].parent) is not None and up not in path:
            path.append(up)
        return path

    # ---- 4. ranking by repeated support -----------------------------------------------------
    def _rank(
        self, pool: list[ScoredChunk], reaches: dict[str, Reach], trace: Trace, k: int
    ) -> list[ScoredChunk]:
        with trace.step("ranking") as info:
            signals_of = {s.chunk_id: s.signals for s in pool}
            ranking = []
            for r in reaches.values():
                signals = (
                    signals_of.get(r.node, {})
                    | {
                        "relevance": r.relevance,
                        "support": float(len(r.support)),
                        "hop": float(r.hop),
                    }
                    | ({"theta": r.theta} if r.parent is not None else {})
                )
                # Anchors rank by their own strength: anchors linking to each other mostly
                # resemble each other, which says nothing about a chain through them.
                support = len(r.support) if r.parent is not None else 1
                score = support_boost(r.relevance, support)
                if r.parent is not None:  # never above the anchor its evidence starts from
                    score = min(score, reaches[r.anchor].relevance)
                ranking.append(ScoredChunk(r.node, score, signals))
            ranking += [
                ScoredChunk(s.chunk_id, PAD_FACTOR * s.score, s.signals | {"padded": 1.0})
                for s in pool
                if s.chunk_id not in reaches
            ]
            ranking.sort(key=lambda s: (-s.score, s.chunk_id))
            info.update(
                kept=len(reaches),
                padded=len(ranking) - len(reaches),
                top={s.chunk_id: round(s.score, 4) for s in ranking[:k]},
            )
        trace.pool = len(reaches)
        return ranking

    # ---- 5. reasoning chains ----------------------------------------------------------------
    def _finish(self, query: Query, result: RetrievalResult) -> None:
        expanded, links = getattr(self._local, "relations", ([], []))
        self._local.relations = ([], [])
        budget = self.lcfg.chain_budget_tokens
        with result.trace.step("chains", budget=budget) as info:
            paths = chain_paths(expanded, links)
            result.chains, used = self._chain_writer.write(query, paths[:MAX_CHAINS], budget)
            info.update(
                relations=len(expanded) + len(links),
                count=len(result.chains),
                tokens=used,
                sample=result.chains[:2],
            )
