"""SEMANTIC: the k nearest neighbours of each chunk by cosine of its embedding, truncated
below `semantic_min_cosine` and stored once per pair (weight = the cosine, capped at 1).
Above `semantic_approximate_above` chunks the neighbours come from an IVF index
(`ingest.edges.vectors.Approximate`), so the build is no longer quadratic.

Scores come from `ingest.edges.vectors` (exact and reproducible), so an update scores a pair
bit-identically to a fresh build. Only new chunks are dirty: a stored chunk's embedding
never changes (a changed text is a new chunk).
"""

from __future__ import annotations

from ingest.config import EdgeConfig
from ingest.edges import topk
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.model import KindChange, KindEdges
from ingest.edges.stored import StoredEdges, StoredStates
from ingest.edges.vectors import Approximate, VectorSpace, dense_space

KIND = "SEMANTIC"


def _weight(score: float) -> float:
    return min(score, 1.0)


def space(corpus: EdgeCorpus, cfg: EdgeConfig) -> VectorSpace:
    have = [c for c in corpus.chunks if c.embedding is not None]
    approximate = Approximate(
        cfg.semantic_approximate_above, cfg.semantic_ivf_nprobe, cfg.semantic_ivf_depth
    )
    return dense_space(
        [c.id for c in have],
        [c.embedding for c in have],
        cfg.semantic_min_cosine,
        approximate,
        known=corpus.known_units,
    )


def build(corpus: EdgeCorpus, cfg: EdgeConfig) -> KindEdges:
    return topk.build(space(corpus, cfg), KIND, cfg.semantic_k, _weight)


def update(
    change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges, states: StoredStates
) -> KindChange:
    return topk.update(
        space(change.corpus, cfg),
        KIND,
        cfg.semantic_k,
        _weight,
        change.added_ids,
        change.old_edges(KIND),
        stored,
        states,
    )
