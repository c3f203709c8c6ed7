"""Chunk-graph analytics for the embedded backend: Leiden, FastRP and spectral coordinates
over the RELATED graph, computed in-process with the same parameters GDS gets."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from graph.algorithms.fastrp import fastrp
from graph.algorithms.leiden import leiden
from graph.algorithms.spectral import spectral_coordinates
from graph.base import AnalyticsReport
from graph.communities import guard, summarize
from graph.config import AlgorithmConfig
from graph.embedded.memory import PUBLISHED_KEY

if TYPE_CHECKING:
    from graph.embedded.store import EmbeddedStore


def run_chunk_analytics(store: EmbeddedStore, cfg: AlgorithmConfig) -> AnalyticsReport:
    report = AnalyticsReport()
    graph = store._memory.chunk_graph()
    ids, adj = graph.ids, graph.adj
    if not ids:
        store.write_communities({}, [])
        store.set_meta(PUBLISHED_KEY, str(store.graph_version()))
        return report

    t0 = time.perf_counter()
    labels, modularity = leiden(adj, cfg)
    assignment = {cid: int(label) for cid, label in zip(ids, labels, strict=True)}
    store.write_communities(assignment, summarize(assignment, store.term_matrix()))
    report.seconds["leiden"] = round(time.perf_counter() - t0, 3)
    report.communities = len(set(assignment.values()))
    report.modularity = float(modularity)
    report.warnings += guard(len(ids), report.communities, report.modularity)

    t0 = time.perf_counter()
    vectors = fastrp(adj, cfg)
    store.write_vectors("fastrp", dict(zip(ids, vectors, strict=True)))
    report.seconds["fastrp"] = round(time.perf_counter() - t0, 3)

    t0 = time.perf_counter()
    coords = spectral_coordinates(adj, cfg.spectral_dimension)
    store.write_vectors("spectral", dict(zip(ids, coords, strict=True)))
    report.seconds["spectral"] = round(time.perf_counter() - t0, 3)
    store.set_meta(PUBLISHED_KEY, str(store.graph_version()))
    return report
