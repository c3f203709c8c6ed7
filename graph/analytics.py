"""The chunk-graph analytics pipeline, written once: Leiden → community summary → guard →
FastRP → spectral coordinates, over the RELATED graph. Each backend supplies the steps that
differ (`AnalyticsHooks`): where the graph lives, how Leiden and FastRP run (in-process, or
GDS over a named projection), and what publishing a finished pass means.

`patch_chunk_analytics` is the local alternative after a small change: only the new chunks
get values, from their RELATED neighbours (the community most of their weight points to, the
weighted mean of the neighbours' FastRP and spectral vectors, as an out-of-sample extension
would place them); nobody else moves. It is an approximation, so the caller records how
stale the analytics are until the next full pass.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from graph.algorithms.spectral import spectral_coordinates
from graph.base import AnalyticsHooks
from graph.communities import guard, summarize
from graph.config import AlgorithmConfig
from graph.types import RELATED, AnalyticsReport

VECTOR_PROPS = ("fastrp", "spectral")


def _timed(report: AnalyticsReport, stage: str, t0: float) -> None:
    report.seconds[stage] = round(time.perf_counter() - t0, 3)


def run_chunk_analytics(hooks: AnalyticsHooks, cfg: AlgorithmConfig) -> AnalyticsReport:
    report = AnalyticsReport()
    store = hooks.store
    hooks.prepare(cfg, report, full=True)
    ids, adj = hooks.chunk_graph()
    if not ids:
        store.write_communities({}, [])
        hooks.publish()
        return report

    t0 = time.perf_counter()
    if adj.sum() > 0:
        assignment, modularity = hooks.leiden(cfg)
    else:  # no RELATED weight (GDS's Leiden fails on it): every chunk is its own community
        assignment, modularity = {c: i for i, c in enumerate(ids)}, 0.0
    store.write_communities(assignment, summarize(assignment, store.term_matrix()))
    _timed(report, "leiden", t0)
    report.communities = len(set(assignment.values()))
    report.modularity = float(modularity)
    report.warnings += guard(len(ids), report.communities, report.modularity)

    t0 = time.perf_counter()
    hooks.fastrp(cfg, report)
    _timed(report, "fastrp", t0)

    t0 = time.perf_counter()
    coords = spectral_coordinates(adj, cfg.spectral_dimension)
    store.write_vectors("spectral", dict(zip(ids, coords, strict=True)))
    _timed(report, "spectral", t0)
    hooks.publish()
    return report


def patch_chunk_analytics(
    hooks: AnalyticsHooks, cfg: AlgorithmConfig, new_ids: Sequence[str]
) -> AnalyticsReport:
    report = AnalyticsReport()
    store = hooks.store
    hooks.prepare(cfg, report, full=False)
    t0 = time.perf_counter()
    new = set(new_ids)
    weights: dict[str, dict[str, float]] = defaultdict(dict)
    for e in store.neighbours(sorted(new), [RELATED]):
        for a, b in ((e.src, e.dst), (e.dst, e.src)):
            if a in new:
                weights[a][b] = e.weight
    known = sorted({b for ws in weights.values() for b in ws if b not in new})
    community = {v.id: v.community for v in store.get_chunks(known) if v.community is not None}
    vectors = {prop: store.chunk_vectors(prop, known) for prop in VECTOR_PROPS}
    # Two rounds: chunks next to stored chunks first, then chunks next only to new ones.
    for _ in range(2):
        for cid in sorted(new - community.keys()):
            votes: dict[int, float] = defaultdict(float)
            for b, w in weights[cid].items():
                if b in community:
                    votes[community[b]] += w
            if votes:
                community[cid] = min(votes, key=lambda c: (-votes[c], c))
            for prop in VECTOR_PROPS:
                mean = _weighted_mean(weights[cid], vectors[prop])
                if mean is not None:
                    vectors[prop][cid] = mean
    store.patch_chunk_analytics(
        {c: community[c] for c in sorted(new) if c in community},
        {prop: {c: v for c, v in vectors[prop].items() if c in new} for prop in VECTOR_PROPS},
    )
    _timed(report, "patch", t0)
    report.communities = len(store.communities())
    hooks.publish()
    return report


def _weighted_mean(weights: dict[str, float], vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    have = [(w, vectors[b]) for b, w in sorted(weights.items()) if b in vectors]
    total = sum(w for w, _ in have)
    if not have or total <= 0:
        return None
    return (sum(w * v.astype(np.float64) for w, v in have) / total).astype(np.float32)
