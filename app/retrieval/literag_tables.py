"""LiteRAG's per-graph lookup tables: a fuzzy index of document titles and entity names,
each chunk's community and every community's top tokens, RELATED degrees and BM25 positions.
Building them reads the whole graph, so they are built once per graph version and shared by
every LiteRAG retriever of one engine."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

import numpy as np

from graph.types import RELATED
from ingest.published import DERIVED_KEY

if TYPE_CHECKING:
    from app.retrieval.base import RetrievalContext

ENTITY_WEIGHT = 0.7  # an entity-name match counts this much of a title match, at most
MIN_NAME_CHARS = 3
NUMERIC_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})


def trigrams(text: str) -> frozenset[str]:
    padded = f" {text} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """2|A∩B| / (|A|+|B|) over character trigrams (the set analogue of difflib's 2M/T)."""
    return 2.0 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


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


def build_tables(engine: RetrievalContext, key: tuple[Any, ...]) -> GraphTables:
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


def graph_tables(engine: RetrievalContext) -> GraphTables:
    """The engine's tables for the current graph. Communities are written after the version
    bump, so the derived-index key (set last by ingest) is part of the cache key."""
    key = (
        engine.store.graph_version(),
        engine.store.get_meta(DERIVED_KEY),
        id(engine.dense),
        id(engine.lexical),
    )
    return engine.derived("literag tables", key, lambda: build_tables(engine, key))
