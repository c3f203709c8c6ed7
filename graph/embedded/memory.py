"""In-memory graphs for the embedded backend's per-query algorithms.

Loading the token graph from SQLite costs far more than one PPR run, so the adjacency and
its PPR operator are built once per graph version and reused until an ingest changes it.
The adjacency of the published version and its PPR operator are also kept beside the store,
as arrays a later process maps from disk (`graph/kept.py`) instead of reading every
co-occurrence row and building the operator again: the largest part of an engine's start
once the bridge graph is kept too.

The graphs read the store through `GraphSource`, the few reads they need, so this module
does not import the store that holds it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import sparse

from graph.algorithms.ppr import NamedPpr, PprOperator
from graph.config import AlgorithmConfig
from graph.kept import STORE_ID, KeptGraph, adjacency_arrays, adjacency_of

PUBLISHED_KEY = "published_version"
log = logging.getLogger(__name__)


class GraphSource(Protocol):
    """What the in-memory graphs load from (the embedded store)."""

    def get_meta(self, key: str) -> str | None: ...

    def graph_version(self) -> int: ...

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]: ...

    def related_adjacency(self) -> tuple[list[str], sparse.csr_matrix]: ...


@dataclass(slots=True)
class _TokenGraph:
    version: int
    min_weight: int
    texts: list[str]
    index: dict[str, int]
    operator: PprOperator
    adjacency: sparse.csr_matrix


@dataclass(slots=True)
class _ChunkGraph:
    version: int
    ids: list[str]
    index: dict[str, int]
    adj: sparse.csr_matrix


def _prune(adj: sparse.csr_matrix, min_weight: int) -> sparse.csr_matrix:
    if min_weight <= 1:
        return adj
    pruned = adj.copy()
    pruned.data[pruned.data < min_weight] = 0.0
    pruned.eliminate_zeros()
    return pruned


class MemoryGraphs:
    def __init__(self, store: GraphSource, kept: KeptGraph | None = None) -> None:
        self._store = store
        self._kept = kept
        self._lock = threading.Lock()
        self._tokens: _TokenGraph | None = None
        self._loading: tuple[int, int] | None = None  # (version, min weight) being loaded
        self._chunks: _ChunkGraph | None = None

    def token_graph(self, min_weight: int | None = None) -> _TokenGraph:
        """Pinned to the version the last completed ingest published (as GDS projections
        are), so queries during a re-ingest keep using one whole graph. PPR runs on the
        edges of at least `min_weight` (None: whatever the cached graph prunes, for callers
        that read only `adjacency`, which keeps every edge). While one thread loads a newly
        published version, the others keep answering from the graph they had (loading a
        large collection's graph takes seconds)."""
        published = self._store.get_meta(PUBLISHED_KEY)
        version = int(published) if published else self._store.graph_version()
        with self._lock:
            current = self._tokens
            if min_weight is None:
                min_weight = current.min_weight if current is not None else 1
            wanted = (version, min_weight)
            if current is not None and (current.version, current.min_weight) == wanted:
                return current
            if current is None or current.min_weight != min_weight:
                self._tokens = self._load_tokens(*wanted)
                return self._tokens
            if self._loading == wanted:
                return current  # another thread is loading the new version
            self._loading = wanted
        try:
            loaded = self._load_tokens(*wanted)
            with self._lock:
                self._tokens = loaded
            return loaded
        finally:
            with self._lock:
                self._loading = None

    def _load_tokens(self, version: int, min_weight: int) -> _TokenGraph:
        """The graph of `version` with its PPR operator: mapped from the kept copy when it
        is of this store and version, else read from the store (and kept, when `version`
        is what an ingest published)."""
        store_id = self._store.get_meta(STORE_ID)
        key = f"{store_id}:{version}:w{min_weight}" if store_id else None
        found = self._kept.load(key) if self._kept is not None and key else None
        if found is not None:
            texts, arrays = found
            adj, operator = adjacency_of(arrays), PprOperator.from_arrays(arrays)
        else:
            texts, adj = self._store.token_graph()
            operator = PprOperator(_prune(adj, min_weight))
            published = self._store.get_meta(PUBLISHED_KEY)
            if self._kept is not None and key and published and int(published) == version:
                self._kept.save(key, texts, adjacency_arrays(adj) | operator.to_arrays())
        index = {t: i for i, t in enumerate(texts)}
        return _TokenGraph(version, min_weight, texts, index, operator, adj)

    def chunk_graph(self) -> _ChunkGraph:
        version = self._store.graph_version()
        with self._lock:
            if self._chunks is None or self._chunks.version != version:
                ids, adj = self._store.related_adjacency()
                index = {c: i for i, c in enumerate(ids)}
                self._chunks = _ChunkGraph(version, ids, index, adj)
            return self._chunks

    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        graph = self.token_graph(cfg.token_min_weight)
        return NamedPpr(graph.texts, graph.operator, graph.index).top(seeds, cfg, top_k)

    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        graph = self.token_graph()
        rows = [graph.index[t] for t in seeds if t in graph.index]
        if not rows:
            return {}
        weight = np.asarray(graph.adjacency[rows].sum(axis=0)).ravel()
        ranked = sorted(
            (i for i in np.flatnonzero(weight)), key=lambda i: (-weight[i], graph.texts[i])
        )[:top_k]
        return {graph.texts[i]: float(weight[i]) for i in ranked}

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        graph = self.chunk_graph()
        members = [c for c in dict.fromkeys(candidates) if c in graph.index]
        if not members:
            return {}
        rows = np.fromiter((graph.index[c] for c in members), np.int64, len(members))
        sub = graph.adj[rows][:, rows].tocsr()
        local = {c: i for i, c in enumerate(members)}
        seed_ids = {local[c]: w for c, w in seeds.items() if c in local}
        if not seed_ids:
            return {}
        scores = PprOperator(sub).run(seed_ids, cfg)
        return {c: float(scores[i]) for c, i in local.items()}
