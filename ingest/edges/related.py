"""RELATED: the fusion of the six kinds over an unordered pair, Σ_kind α_kind · w_kind, kept
when at least τ and stored rounded to 1e-9.

For a pair {a, b} with a < b, a directed kind contributes its a → b edge when there is one,
else its b → a edge. The sum runs over the kinds in EDGE_KINDS order with `math.fsum`, so the
value depends on the pair's six weights only: an update re-fuses exactly the pairs whose
weight changed in some kind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from graph.types import EDGE_KINDS, RELATED, ChunkEdge
from ingest.config import EdgeConfig
from ingest.edges.corpus import CorpusChange
from ingest.edges.model import EdgeKey, KindChange, KindEdges, diff, pair
from ingest.edges.stored import StoredEdges

KIND = RELATED


def fuse(
    a: str, b: str, weight: Mapping[str, Mapping[EdgeKey, float]], cfg: EdgeConfig
) -> float | None:
    terms = []
    for kind in EDGE_KINDS:
        edges = weight.get(kind, {})
        w = edges.get((a, b), edges.get((b, a)))
        if w is not None:
            terms.append(cfg.alpha.get(kind, 0.0) * w)
    total = math.fsum(terms)
    return round(total, 9) if terms and total >= cfg.tau else None


def build(kinds: Mapping[str, KindEdges], cfg: EdgeConfig) -> KindEdges:
    weights = {kind: kinds[kind].weights for kind in EDGE_KINDS if kind in kinds}
    pairs = {pair(*key) for edges in weights.values() for key in edges}
    out = KindEdges(KIND)
    for a, b in pairs:
        w = fuse(a, b, weights, cfg)
        if w is not None:
            out.weights[(a, b)] = w
    return out


def update(
    changes: Mapping[str, KindChange],
    change: CorpusChange,
    cfg: EdgeConfig,
    stored: StoredEdges,
) -> KindChange:
    """Re-fuse the pairs some kind changed, from the stored weights and the changes."""
    affected = {pair(*key) for ch in changes.values() for key in ch.touched}
    ends = sorted({c for p in affected for c in p if c in change.corpus})
    weights: dict[str, dict[EdgeKey, float]] = {}
    for kind in EDGE_KINDS:
        current = stored.around(ends, kind)
        if kind in changes:
            for key in changes[kind].deleted:
                current.pop(key, None)
            current.update(changes[kind].written)
        weights[kind] = current
    new: dict[EdgeKey, float] = {}
    for a, b in affected:
        if a in change.corpus and b in change.corpus:
            w = fuse(a, b, weights, cfg)
            if w is not None:
                new[(a, b)] = w
    present = {k: w for k, w in stored.around(ends, KIND).items() if pair(*k) in affected}
    return diff(KIND, present, new, change.old_edges(KIND))


def related_edges(edges: Iterable[ChunkEdge], cfg: EdgeConfig) -> list[ChunkEdge]:
    """RELATED over a list of typed edges (the first edge of a kind per pair counts)."""
    weights: dict[str, dict[EdgeKey, float]] = {}
    for e in edges:
        per_kind = weights.setdefault(e.kind, {})
        if (e.src, e.dst) not in per_kind and (e.dst, e.src) not in per_kind:
            per_kind[(e.src, e.dst)] = e.weight
    kinds = {k: KindEdges(k, w) for k, w in weights.items()}
    return build(kinds, cfg).edges()
