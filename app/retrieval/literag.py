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
  5. chains (`_finish`): each kept path anchor → … → chunk as titles joined by the typed edge
     kinds between consecutive chunks, with each chunk's sentence closest to the question,
     most relevant first, within `chain_budget_tokens`.

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

Per-graph tables (fuzzy name index, communities, degrees) are built once per graph version
and shared by every LiteRAG retriever of one engine.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

import numpy as np

from app.retrieval.base import Query, RetrievalResult, Retriever, ScoredChunk, Trace
from app.retrieval.config import LiteragConfig
from graph.types import EDGE_KINDS, RELATED, ChunkView
from ingest.runner import DERIVED_KEY
from ingest.sentences import split_sentences
from ingest.tokens import stopwords

if TYPE_CHECKING:
    from app.engine import Engine

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
ENTITY_WEIGHT = 0.7  # an entity-name match counts this much of a title match, at most
MAX_NGRAM = 6  # longest query n-gram compared with names, in words
MIN_NAME_CHARS = 3
NUMERIC_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
DIRECTED_INVERSE = {"CITES": "CITED_BY", "NEXT": "PREV"}
# Edge kinds shown in a chain, most telling first (at most LABELS_SHOWN per step).
LABEL_ORDER = (
    "CITES",
    "CITED_BY",
    "SHARES_ENTITY",
    "SAME_SECTION",
    "NEXT",
    "PREV",
    "UTILITY",
    "SEMANTIC",
    RELATED,
)
LABELS_SHOWN = 2
MAX_CHAINS = 8  # paths whose evidence is computed (the token budget may bind first)
EVIDENCE_CANDIDATES = 3  # most sentences of one chunk embedded to break an overlap tie
EVIDENCE_BATCH = 4  # most sentences embedded per query (later ties keep their first)
EVIDENCE_WORDS = 60
SENTENCE_CACHE = 4096

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


def trigrams(text: str) -> frozenset[str]:
    padded = f" {text} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """2|A∩B| / (|A|+|B|) over character trigrams (the set analogue of difflib's 2M/T)."""
    return 2.0 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def edge_labels(edges: Iterable[tuple[str, str, str, float]], src: str) -> tuple[str, ...]:
    """Typed kinds between a pair, read in the direction of travel from `src`, most telling
    first."""
    labels = {
        DIRECTED_INVERSE[k] if k in DIRECTED_INVERSE and a != src else k for k, a, _, _ in edges
    }
    return tuple(sorted(labels, key=LABEL_ORDER.index)) or (RELATED,)


class NameIndex:
    """Normalised names (titles, entity names) → the chunks they identify, with a weight per
    chunk, and fuzzy lookup: difflib's ratio ≥ r, searched through a trigram index.

    Running difflib against every name for every query n-gram would take seconds on a large
    corpus. Instead one bincount over the query trigrams' postings gives every name's trigram
    Dice at once, and only names of compatible length (difflib's ratio is at most
    2·min(a, b)/(a + b)) with Dice ≥ 3r − 2 go to difflib: one edit costs a short name about
    1/len of its ratio but up to 3/len of its Dice, so that floor keeps the names that can
    reach ratio r (in practice; it is not a bound)."""

    def __init__(self, names: dict[str, dict[str, float]]) -> None:
        self.names = sorted(names)
        self.chunks = [tuple(sorted(names[n].items())) for n in self.names]
        self.exact = {n: i for i, n in enumerate(self.names)}
        postings: dict[str, list[int]] = defaultdict(list)
        sizes = []
        for i, name in enumerate(self.names):
            grams = trigrams(name)
            sizes.append(len(grams))
            for g in grams:
                postings[g].append(i)
        self.postings = {g: np.asarray(ids, dtype=np.int64) for g, ids in postings.items()}
        self.sizes = np.asarray(sizes, dtype=np.float64)
        self.lengths = np.asarray([len(n) for n in self.names], dtype=np.int64)

    def lookup(self, text: str, min_ratio: float) -> list[tuple[int, float]]:
        """(name index, difflib ratio) of the names at least `min_ratio` similar to `text`."""
        if text in self.exact:
            return [(self.exact[text], 1.0)]
        grams = trigrams(text)
        hits = [self.postings[g] for g in grams if g in self.postings]
        if not hits:
            return []
        shared = np.bincount(np.concatenate(hits), minlength=len(self.names))
        floor = max(3.0 * min_ratio - 2.0, 1e-9)
        close = (2.0 * shared / (len(grams) + self.sizes) >= floor) & (
            self.lengths * (2.0 - min_ratio) >= len(text) * min_ratio
        )
        close &= len(text) * (2.0 - min_ratio) >= self.lengths * min_ratio
        found = []
        matcher = SequenceMatcher(autojunk=False)
        matcher.set_seq2(text)
        for i in np.flatnonzero(close).tolist():
            matcher.set_seq1(self.names[i])
            if matcher.quick_ratio() >= min_ratio and (ratio := matcher.ratio()) >= min_ratio:
                found.append((i, ratio))
        return found


@dataclass(slots=True)
class GraphTables:
    """What LiteRAG derives from the whole graph, rebuilt when the graph changes."""

    key: tuple[Any, ...]
    names: NameIndex
    community: dict[str, int]
    community_tokens: dict[int, frozenset[str]]
    degree: dict[str, int]
    mean_degree: float
    lexical_pos: dict[str, int]


def build_tables(engine: Engine, key: tuple[Any, ...]) -> GraphTables:
    ids = list(engine.dense.ids)
    views = engine.store.get_chunks(ids)
    norm = engine.analyzer.all_words
    names: dict[str, dict[str, float]] = defaultdict(dict)
    for v in views:
        title = " ".join(norm(v.title))
        if len(title) >= MIN_NAME_CHARS:
            names[title][v.id] = 1.0
    entity_chunks: dict[str, set[str]] = defaultdict(set)
    for cid, mentions in engine.store.chunk_entities(ids).items():
        for m in mentions:
            name = " ".join(norm(m.name))
            if m.label not in NUMERIC_LABELS and len(name) >= MIN_NAME_CHARS:
                entity_chunks[name].add(cid)
    log_n = math.log(len(ids) + 1)
    for name, chunks in entity_chunks.items():
        # A mention identifies a chunk less than a title does, and an entity named in many
        # chunks says little about any one of them.
        weight = ENTITY_WEIGHT * (1.0 - math.log(len(chunks)) / log_n)
        for cid in chunks:
            names[name][cid] = max(names[name].get(cid, 0.0), weight)
    degree: Counter[str] = Counter()
    for e in engine.store.neighbours(ids, kinds=[RELATED]):
        degree[e.src] += 1
        degree[e.dst] += 1
    return GraphTables(
        key=key,
        names=NameIndex(names),
        community={v.id: v.community for v in views if v.community is not None},
        community_tokens={c.id: frozenset(c.top_tokens) for c in engine.store.communities()},
        degree=dict(degree),
        mean_degree=sum(degree.values()) / max(len(ids), 1),
        lexical_pos={c: i for i, c in enumerate(engine.lexical.chunk_ids)},
    )


_TABLES: weakref.WeakKeyDictionary[Engine, GraphTables] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def graph_tables(engine: Engine) -> GraphTables:
    """The engine's tables for the current graph. Communities are written after the version
    bump, so the derived-index key (set last by ingest) is part of the cache key."""
    key = (
        engine.store.graph_version(),
        engine.store.get_meta(DERIVED_KEY),
        id(engine.dense),
        id(engine.lexical),
    )
    with _TABLES_LOCK:
        tables = _TABLES.get(engine)
        if tables is None or tables.key != key:
            tables = _TABLES[engine] = build_tables(engine, key)
    return tables


@dataclass(slots=True)
class Reach:
    """How a chunk was first kept: the path's anchor, the chunk it came from and the edge;
    `support` collects every anchor whose paths kept it."""

    node: str
    anchor: str
    parent: str | None
    hop: int
    relevance: float
    theta: float = 0.0
    labels: tuple[str, ...] = ()
    support: set[str] = field(default_factory=set)


class LiteragRetriever(Retriever):
    name = "literag"

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._sentence_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._sentence_lock = threading.Lock()
        # The kept paths go from `_retrieve` to `_finish` (same call, same thread).
        self._local = threading.local()

    @property
    def lcfg(self) -> LiteragConfig:
        return self.cfg.literag

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
        for e in self.engine.store.neighbours(frontier):
            if e.kind == RELATED:
                for a, b in ((e.src, e.dst), (e.dst, e.src)):
                    if a in front:
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
            paths = _paths(expanded, links)
            result.chains, used = self._chains(query, paths[:MAX_CHAINS], budget)
            info.update(
                relations=len(expanded) + len(links),
                count=len(result.chains),
                tokens=used,
                sample=result.chains[:2],
            )

    def _chains(self, query: Query, paths: list[Path], budget: int) -> tuple[list[str], int]:
        ids = list(dict.fromkeys(c for nodes, _ in paths for c in nodes))
        views = {v.id: v for v in self.engine.store.get_chunks(ids)}
        titles = " ".join(v.title for v in views.values())
        evidence = self._evidence(query, [views[c] for c in ids if c in views], titles)
        chains: list[str] = []
        used = 0
        for nodes, labels in paths:
            if any(c not in views for c in nodes):
                continue
            steps = [_name(views[nodes[0]])]
            for label, node in zip(labels, nodes[1:], strict=True):
                steps.append(f"—{'+'.join(label[:LABELS_SHOWN])}→ {_name(views[node])}")
            quotes = " → ".join(f'"{evidence[c]}"' for c in nodes)
            chain = f"{' '.join(steps)}: {quotes}"
            cost = self.engine.embedder.count_tokens(chain)
            if chain in chains or used + cost > budget:
                continue
            chains.append(chain)
            used += cost
        return chains, used

    def _evidence(self, query: Query, views: Sequence[ChunkView], context: str) -> dict[str, str]:
        """Each chunk's sentence most similar to the question. The candidates are the
        sentences sharing most words with the question and the chain's titles (a chunk's
        relation to the next hop is usually stated in the sentence naming it); only ties are
        embedded, all chunks' in one batch, because embedding sentences is the one costly
        step of a LiteRAG query (≈10 ms a sentence on two busy cores)."""
        analyzer = self.engine.analyzer
        wanted = set(query.tokens) | set(analyzer.tokens(context))
        candidates: dict[str, list[str]] = {}
        room = EVIDENCE_BATCH
        for v in views:  # best chains' chunks first, so they get the embedding room
            # A chunk's own title is in its opening sentence, not in its relations.
            words = wanted - set(analyzer.tokens(v.title))
            sentences = split_sentences(v.text) or [v.text]
            overlap = [len(words & set(analyzer.tokens(s))) for s in sentences]
            top = max(overlap)
            ties = [s for s, n in zip(sentences, overlap, strict=True) if n == top]
            ties = ties[: min(EVIDENCE_CANDIDATES, room)] or ties[:1]
            room -= len(ties) if len(ties) > 1 else 0
            candidates[v.id] = ties
        ambiguous = list(dict.fromkeys(s for c in candidates.values() if len(c) > 1 for s in c))
        with self._sentence_lock:
            cache = self._sentence_vectors
            missing = [s for s in ambiguous if s not in cache]
            if missing:
                cache.update(zip(missing, self.engine.embedder.encode(missing), strict=True))
            vectors = {s: cache[s] for s in ambiguous}
            for s in ambiguous:
                cache.move_to_end(s)
            while len(cache) > SENTENCE_CACHE:
                cache.popitem(last=False)
        out = {}
        for cid, sentences in candidates.items():
            best = sentences[0]
            if len(sentences) > 1:
                best = max(sentences, key=lambda s: float(vectors[s] @ query.embedding))
            words = best.split()
            cut = len(words) > EVIDENCE_WORDS
            out[cid] = " ".join(words[:EVIDENCE_WORDS]) + (" …" if cut else "")
        return out


Path = tuple[list[str], list[tuple[str, ...]]]  # chunks, edge labels between consecutive ones


def _paths(expanded: list[Reach], links: list[Reach]) -> list[Path]:
    """Each kept relation as its path from the anchor, most relevant last step first, one per
    set of chunks (A→B and B→A between two anchors are one relation)."""
    first = {r.node: r for r in expanded}
    best: dict[frozenset[str], tuple[float, list[str], list[tuple[str, ...]]]] = {}
    for r in expanded + links:
        nodes, labels = [r.node], [r.labels]
        cur = r.parent
        while cur is not None and cur not in nodes:
            nodes.append(cur)
            up = first.get(cur)
            if up is None:
                break
            labels.append(up.labels)
            cur = up.parent
        nodes.reverse()
        labels.reverse()
        key, s = frozenset(nodes), r.relevance
        if key not in best or (s, nodes) > best[key][:2]:
            best[key] = (s, nodes, labels)
    ordered = sorted(best.values(), key=lambda p: (-p[0], p[1]))
    return [(nodes, labels) for _, nodes, labels in ordered]


def _name(view: ChunkView) -> str:
    """A chunk's title, with its part number when it is not the document's first chunk."""
    return view.title if view.ordinal == 0 else f"{view.title} §{view.ordinal + 1}"
