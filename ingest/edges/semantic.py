"""SEMANTIC: the k nearest neighbours of each chunk by cosine of its embedding, truncated
below `semantic_min_cosine` and stored once per pair (weight = the cosine, capped at 1).
Above `semantic_approximate_above` chunks the neighbours come from an IVF index
(`ingest.edges.vectors.Approximate`), so the build is no longer quadratic.

Scores come from `ingest.edges.vectors` (exact and reproducible), so an update scores a pair
bit-identically to a fresh build. Only new chunks are dirty: a stored chunk's embedding
never changes (a changed text is a new chunk).
"""

from __future__ import annotations

import numpy as np

from ingest.config import EdgeConfig
from ingest.edges import topk
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.indexed import IndexedCorpus
from ingest.edges.model import KindChange, KindEdges
from ingest.edges.stored import StoredEdges, StoredStates
from ingest.edges.vectors import Approximate, VectorSpace

KIND = "SEMANTIC"


def _weight(score: float) -> float:
    return min(score, 1.0)


def space(corpus: EdgeCorpus, cfg: EdgeConfig) -> VectorSpace:
    ids, rows = corpus.unit_rows
    approximate = Approximate(
        cfg.semantic_approximate_above, cfg.semantic_ivf_nprobe, cfg.semantic_ivf_depth
    )
    # float64: products of the integer rows stay exact (below 2^53), int32 ones would wrap.
    return VectorSpace(ids, rows.astype(np.float64), cfg.semantic_min_cosine, approximate)


def build(corpus: EdgeCorpus, cfg: EdgeConfig) -> KindEdges:
    return topk.build(space(corpus, cfg), KIND, cfg.semantic_k, _weight)


def update(
    change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges, states: StoredStates
) -> KindChange:
    corpus = change.corpus
    scored = (
        corpus.semantic_space(cfg.semantic_min_cosine)
        if isinstance(corpus, IndexedCorpus)
        else space(corpus, cfg)
    )
    return topk.update(
        scored,
        KIND,
        cfg.semantic_k,
        _weight,
        change.added_ids,
        change.old_edges(KIND),
        stored,
        states,
    )
