"""The embedded backend's analytics hooks: Leiden and FastRP in-process (leidenalg, numpy)
on the in-memory RELATED graph, with the same parameters GDS gets; the pipeline itself is
graph/analytics.py. The hooks get the store and its in-memory graphs handed in, so this
module does not import the store back."""

from __future__ import annotations

from scipy import sparse

from graph.algorithms.fastrp import fastrp
from graph.algorithms.leiden import leiden
from graph.base import AnalyticsHooks, AnalyticsReport, GraphStore
from graph.config import AlgorithmConfig
from graph.embedded.memory import PUBLISHED_KEY, MemoryGraphs


class EmbeddedAnalytics(AnalyticsHooks):
    def __init__(self, store: GraphStore, memory: MemoryGraphs) -> None:
        self.store = store
        self._memory = memory

    def prepare(self, cfg: AlgorithmConfig, report: AnalyticsReport, *, full: bool) -> None:
        pass

    def chunk_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        graph = self._memory.chunk_graph()
        return graph.ids, graph.adj

    def leiden(self, cfg: AlgorithmConfig) -> tuple[dict[str, int], float]:
        ids, adj = self.chunk_graph()
        labels, modularity = leiden(adj, cfg)
        return {cid: int(label) for cid, label in zip(ids, labels, strict=True)}, modularity

    def fastrp(self, cfg: AlgorithmConfig, report: AnalyticsReport) -> None:
        ids, adj = self.chunk_graph()
        self.store.write_vectors("fastrp", dict(zip(ids, fastrp(adj, cfg), strict=True)))

    def publish(self) -> None:
        self.store.set_meta(PUBLISHED_KEY, str(self.store.graph_version()))
