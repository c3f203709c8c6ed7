"""The Neo4j backend: the real deployment. All statements come from cypher/*.cypher.

Every `apply` runs in one write transaction (documents, chunks, token df, co-occurrence
deltas, mentions and the version counters together), so a killed ingest never leaves a
half-written document or a weight counted twice. Graph algorithms run in GDS over named
projections kept in the catalog (graph/neo4j/gds.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graph.analytics import run_chunk_analytics
from graph.base import AnalyticsReport
from graph.collections import DEFAULT_COLLECTION, check_collection
from graph.config import AlgorithmConfig, Neo4jConfig
from graph.errors import LegacyStore
from graph.kept import KeptGraph
from graph.neo4j.connection import connect
from graph.neo4j.gds import GdsAnalytics, GdsHooks
from graph.neo4j.store_reads import _Neo4jReads
from graph.neo4j.store_writes import _Neo4jWrites
from graph.neo4j.token_mirror import TokenMirror


class Neo4jStore(_Neo4jWrites, _Neo4jReads):
    """The one Neo4j store class: writes and reads (the mixins), the collection's lifecycle,
    and the algorithms (GDS, or the in-process token graph)."""

    backend = "neo4j"
    remote = True

    def __init__(
        self,
        cfg: Neo4jConfig,
        collection: str,
        *,
        allow_legacy: bool = False,
        local_dir: Path | None = None,
    ) -> None:
        """A store bound to one collection of the database. `allow_legacy` lets `ingest
        --rebuild` open `default` although an older neorag's graph is still there (it
        deletes that graph); otherwise its presence is an error naming the fix.
        `local_dir`: this machine's folder for the collection, where copies of server-side
        graphs are kept for the next process (graph/kept.py); None keeps nothing."""
        self.cfg = cfg
        self.collection = check_collection(collection)
        self.driver, self.gds_version = connect(cfg)
        self.gds_driver = self.driver
        if cfg.gds_uri:
            try:
                self.gds_driver = connect(cfg.model_copy(update={"uri": cfg.gds_uri}))[0]
            except BaseException:
                self.driver.close()
                raise
        self._schema_ready = False
        self._vector_dimension: int | None = None
        self.gds = GdsAnalytics(self)
        kept = KeptGraph(local_dir / "token-graph") if local_dir is not None else None
        self.token_mirror = TokenMirror(self, kept)
        if self.collection == DEFAULT_COLLECTION and not allow_legacy:
            try:
                self.check_legacy()
            except BaseException:
                self.close()
                raise

    # ---- lifecycle -------------------------------------------------------------------
    def settle(self, timeout: float) -> None:
        self.token_mirror.wait(timeout)

    def published_changed(self) -> None:
        self.gds.forget_published()

    def close(self) -> None:
        if self.gds_driver is not self.driver:
            self.gds_driver.close()
        self.driver.close()

    def clear(self) -> None:
        """Delete this collection: its nodes, relationships and GDS projections. Other
        collections, and anything in the database that neorag did not write, stay."""
        self.gds.drop_all()
        self._auto_commit("clear_graph")
        self._schema_ready = False  # the next write registers the collection again

    def clear_legacy(self) -> None:
        """Delete what an older neorag (before collections) wrote: its nodes carry no
        `collection`, its projections have database-wide names. Only `ingest --rebuild`
        into `default` calls this."""
        self.gds.drop_legacy()
        self._auto_commit("clear_legacy_graph")

    def check_legacy(self) -> None:
        """Refuse to mix with a graph an older neorag wrote (ids without collections)."""
        rows = self.read("legacy_documents")
        n = int(rows[0]["documents"]) if rows else 0
        if n:
            raise LegacyStore(
                f"Neo4j at {self.cfg.uri} holds {n} documents indexed by an older neorag "
                "(document ids without collections); re-index them with "
                "`neorag ingest PATH --rebuild`, which replaces that graph"
            )

    def collections(self) -> list[dict[str, Any]]:
        """Every collection in the database with its document and chunk counts."""
        return self.read("collections_list")

    # ---- analytics -------------------------------------------------------------------
    def run_analytics(self, cfg: AlgorithmConfig) -> AnalyticsReport:
        return run_chunk_analytics(self.analytics_hooks(), cfg)

    def analytics_hooks(self) -> GdsHooks:
        return GdsHooks(self.gds, self)

    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        local = self.token_mirror.top(seeds, cfg, top_k)
        return local if local is not None else self.gds.token_ppr(seeds, cfg, top_k)

    def keep_token_graph(self, cfg: AlgorithmConfig) -> None:
        """The in-process copy of the published token graph, kept beside the collection's
        search files (from a kept older copy and the changes recorded since, or one full
        read); nothing when queries run PageRank in GDS or nothing is kept here."""
        if cfg.token_ppr == "gds" or not self.token_mirror.keeps:
            return
        name = self.gds.published_name("tokens", min_weight=cfg.token_min_weight)
        if name is not None:
            self.token_mirror.load(name, cfg)

    def warm_token_ppr(self, cfg: AlgorithmConfig, token: str) -> None:
        """Load the in-process copy now when queries will run there (from the kept copy,
        a change followed or a full read): a warm-up through GDS would make GDS project the
        whole token graph, which after a change nothing else needs, only to answer one
        question. GDS runs it when the copy is declined (too large) or `token_ppr` is gds."""
        if cfg.token_ppr != "gds":
            name = self.gds.published_name("tokens", min_weight=cfg.token_min_weight)
            if name is not None and self.token_mirror.load(name, cfg):
                return
        super().warm_token_ppr(cfg, token)

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        return self.gds.chunk_ppr(seeds, candidates, cfg)

    def token_neighbourhood(self, seeds: Sequence[str], top_k: int) -> dict[str, float]:
        rows = self.read("token_degree_expansion", seeds=list(seeds), top_k=top_k)
        return {r["token"]: float(r["weight"]) for r in rows}
