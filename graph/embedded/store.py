"""The embedded backend: SQLite for durable state, scipy/igraph in-process for algorithms.

No server, nothing to install beyond the Python packages, so it is the default for a first
run and for fast tests. Reads for retrieval go through in-memory matrices built once per
graph version (see graph/embedded/memory.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from graph.analytics import run_chunk_analytics
from graph.base import AnalyticsReport
from graph.collections import DEFAULT_COLLECTION, check_collection
from graph.config import AlgorithmConfig
from graph.embedded.analytics import EmbeddedAnalytics
from graph.embedded.memory import MemoryGraphs
from graph.embedded.migrate import migrate, needs_migration, schema_sql
from graph.embedded.store_reads import _EmbeddedReads
from graph.embedded.store_writes import _EmbeddedWrites
from graph.kept import KeptGraph


class EmbeddedStore(_EmbeddedWrites, _EmbeddedReads):
    """The one embedded store class: writes and reads (the mixins), and the algorithms on
    the in-memory graphs."""

    backend = "embedded"

    def __init__(self, path: Path, collection: str = DEFAULT_COLLECTION) -> None:
        """One SQLite file holds one collection (the file's folder is named after it)."""
        self.collection = check_collection(collection)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys = OFF")
        if needs_migration(self._conn):
            migrate(self._conn, str(path))
        self._conn.executescript(schema_sql())
        self._lock = threading.RLock()
        self._memory = MemoryGraphs(self, KeptGraph(path.parent / "token-graph"))

    # ---- analytics -------------------------------------------------------------------
    def run_analytics(self, cfg: AlgorithmConfig) -> AnalyticsReport:
        return run_chunk_analytics(self.analytics_hooks(), cfg)

    def analytics_hooks(self) -> EmbeddedAnalytics:
        return EmbeddedAnalytics(self, self._memory)

    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        return self._memory.token_ppr(seeds, cfg, top_k)

    def keep_token_graph(self, cfg: AlgorithmConfig) -> None:
        self._memory.token_graph(cfg.token_min_weight)  # read and kept, or mapped if kept

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        return self._memory.chunk_ppr(seeds, candidates, cfg)

    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        return self._memory.token_neighbourhood(seeds, top_k)
