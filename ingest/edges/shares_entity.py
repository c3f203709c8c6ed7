"""SHARES_ENTITY: entity overlap weighted by rarity, Σ idf(shared) / min(Σ idf(a), Σ idf(b)),
rounded to 1e-9; each chunk keeps its `entity_top_k` strongest partners.

An entity is a case-folded name (the label is ignored). Entities in fewer than 2 or more than
`entity_max_chunks` chunks carry no signal; the others weigh idf = log(1 + n / df), with n
(the number of chunks) rounded to a power of two (`ingest.edges.stats`) so that a change
only moves the idf of the entities whose df it changed. Those entities have at most
`entity_max_chunks` + 1 holders, and exactly their holders are dirty: their mass (the
normaliser) or their overlaps moved. A change of the rounded n asks for a full build.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence

from ingest.config import EdgeConfig
from ingest.edges import topk
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.indexed import IndexedCorpus
from ingest.edges.model import KindChange, KindEdges, Kth
from ingest.edges.stats import octave
from ingest.edges.stored import StoredEdges, StoredStates

KIND = "SHARES_ENTITY"


def idf(df: int, n: int, max_chunks: int) -> float | None:
    return math.log(1.0 + octave(n) / df) if 2 <= df <= max_chunks else None


class EntitySpace:
    """Every chunk is a member (one without informative entities has no partners). An
    entity's idf is computed when first asked for, from its holders: an update over an
    indexed corpus reads only the entities of the chunks it scores."""

    def __init__(self, corpus: EdgeCorpus | IndexedCorpus, cfg: EdgeConfig) -> None:
        self.corpus = corpus
        self.n = len(corpus)
        self.max_chunks = cfg.entity_max_chunks
        self._idf: dict[str, float | None] = {}
        self._mass: dict[str, float] = {}

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.corpus

    def weight(self, name: str) -> float | None:
        if name not in self._idf:
            holders = self.corpus.holders.get(name, ())
            self._idf[name] = idf(len(holders), self.n, self.max_chunks)
        return self._idf[name]

    def mass(self, chunk_id: str) -> float:
        if chunk_id not in self._mass:
            self._mass[chunk_id] = math.fsum(
                w for name in self.corpus.names[chunk_id] if (w := self.weight(name)) is not None
            )
        return self._mass[chunk_id]

    def _prefetch(self, ids: Sequence[str]) -> None:
        """Over an indexed corpus, read the names and holders these ids need in batches."""
        corpus = self.corpus
        if not isinstance(corpus, IndexedCorpus):
            return
        corpus.names.prefetch(ids)
        names = {n for x in ids for n in corpus.names.get(x, ())}
        corpus.holders.prefetch(sorted(names))
        partners = {
            y for n in names if (self.weight(n) is not None) for y in corpus.holders.get(n, ())
        }
        corpus.names.prefetch(sorted(partners))
        corpus.holders.prefetch(sorted({m for y in partners for m in corpus.names.get(y, ())}))

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        self._prefetch(ids)
        out: dict[str, dict[str, float]] = {}
        for x in ids:
            shared: dict[str, list[float]] = defaultdict(list)
            for name in self.corpus.names[x]:
                weight = self.weight(name)
                if weight is None:
                    continue
                for y in self.corpus.holders[name]:
                    if y != x:
                        shared[y].append(weight)
            scores: dict[str, float] = {}
            for y, weights in shared.items():
                denom = min(self.mass(x), self.mass(y))
                if denom > 0:
                    scores[y] = round(min(1.0, math.fsum(weights) / denom), 9)
            out[x] = scores
        return out

    def tops(self, k: int) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
        return topk.tops_from_partners(self, [c.id for c in self.corpus.chunks], k)


def build(corpus: EdgeCorpus, cfg: EdgeConfig) -> KindEdges:
    return topk.build(EntitySpace(corpus, cfg), KIND, cfg.entity_top_k, float)


def needs_full_build(change: CorpusChange) -> bool:
    n = len(change.corpus)
    return octave(change.old_count(n, lambda c: True, lambda r: True)) != octave(n)


def dirty_chunks(change: CorpusChange, cfg: EdgeConfig) -> set[str]:
    """New chunks, and the holders of every entity whose idf (or whether it counts) moved."""
    corpus = change.corpus
    n = len(corpus)
    delta: dict[str, int] = defaultdict(int)
    for c in change.added:
        for name in corpus.names[c.id]:
            delta[name] += 1
    for r in change.removed.values():
        for name in r.names:
            delta[name] -= 1
    dirty = set(change.added_ids)
    if isinstance(corpus, IndexedCorpus):
        corpus.holders.prefetch(sorted(delta))
    for name, d in delta.items():
        now = len(corpus.holders.get(name, ()))
        before = now - d
        if d and idf(now, n, cfg.entity_max_chunks) != idf(before, n, cfg.entity_max_chunks):
            dirty |= corpus.holders.get(name, set())
    return dirty


def update(
    change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges, states: StoredStates
) -> KindChange:
    return topk.update(
        EntitySpace(change.corpus, cfg),
        KIND,
        cfg.entity_top_k,
        float,
        dirty_chunks(change, cfg),
        change.old_edges(KIND),
        stored,
        states,
    )
