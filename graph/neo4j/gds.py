"""GDS, server-side: named projections per graph version, PPR, Leiden, FastRP.

Each collection has its own projections: the token graph as
`neorag_tokens.<db>.<collection>.v<content version>_w<min weight>` and the chunk graph as
`neorag_chunks.<db>.<collection>.v<graph version>` (collection names hold no dots, so one
collection's prefix never matches another's). They are created on first use after a change
and kept in the catalog; older versions of the same collection are dropped. Queries never
project the big graphs; the only per-query projection is the small candidate subgraph
SpectRAG diffuses over.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from graphdatascience import GraphDataScience
from neo4j.exceptions import ClientError
from scipy import sparse

from graph.algorithms.ppr import token_ppr_config
from graph.base import AnalyticsHooks, AnalyticsReport
from graph.config import AlgorithmConfig
from graph.errors import NeoragError
from graph.neo4j.capacity import check_projection_fits

if TYPE_CHECKING:
    from graph.base import GraphStore
    from graph.neo4j.queries import NamedQueries

PREFIX = "neorag_"


class GdsAnalytics:
    """The collection's projections and the algorithms run on them, through the store's
    named statements (`NamedQueries`)."""

    def __init__(self, store: NamedQueries) -> None:
        self.store = store
        self.client = GraphDataScience(
            store.gds_driver, database=store.cfg.database, show_progress=False, arrow=False
        )
        self._lock = threading.Lock()
        self._known: dict[str, str] = {}  # kind -> published name, as last read
        self._projected: set[str] = set()  # names seen in the GDS catalog
        self._relationships: dict[str, int] = {}  # projection name -> its relationships
        self.last_projection_seconds: dict[str, float] = {}

    # ---- projections -----------------------------------------------------------------
    def _prefix(self, kind: str) -> str:
        return f"{PREFIX}{kind}.{self.store.cfg.database}.{self.store.collection}.v"

    def _name(self, kind: str, version: int) -> str:
        return f"{self._prefix(kind)}{version}"

    def projection_version(self, kind: str, name: str) -> int:
        """The graph (tokens: content) version a projection name was made at."""
        return int(name.removeprefix(self._prefix(kind)).split("_w")[0])

    def _catalog(self) -> list[str]:
        return [r["name"] for r in self.store.gds_query("gds_graph_names")]

    def drop_all(self) -> None:
        """Drop this collection's projections."""
        mine = (self._prefix("tokens"), self._prefix("chunks"))
        for name in self._catalog():
            if name.startswith(mine):
                self.client.graph.drop(name, fail_if_missing=False)
        self._known.clear()

    def drop_legacy(self) -> None:
        """Drop the projections an older neorag made under database-wide names."""
        legacy = tuple(f"{PREFIX}{k}_{self.store.cfg.database}_v" for k in ("tokens", "chunks"))
        for name in self._catalog():
            if name.startswith(legacy):
                self.client.graph.drop(name, fail_if_missing=False)

    def published_name(self, kind: str, *, min_weight: int = 1) -> str | None:
        """The name of the published `kind` graph, read from the store (cached until
        `forget_published`): what queries answer from, whether or not GDS holds it yet."""
        suffix = f"_w{min_weight}" if kind == "tokens" else ""
        known = self._known.get(kind)
        if known and known.endswith(suffix):
            return known
        published = self.store.get_meta(f"gds_projection_{kind}")
        if published and published.endswith(suffix):
            self._known[kind] = published
            return published
        return None

    def forget_published(self) -> None:
        """Read the published names again on next use (an engine saw a new index)."""
        self._known.clear()

    def publish(self, kind: str, *, min_weight: int = 1) -> str:
        """Publish the graph as it is now under its versioned name without projecting it:
        the GDS projection is made when an algorithm first needs it (`projection`). After a
        small change, queries run PageRank on their in-process copy (token_mirror.py), which
        reads the stored graph, so a change does not pay for projecting millions of
        relationships it will not use."""
        suffix = f"_w{min_weight}" if kind == "tokens" else ""
        version = self.store.content_version() if kind == "tokens" else self.store.graph_version()
        name = self._name(kind, version) + suffix
        with self._lock:
            self.store.set_meta(f"gds_projection_{kind}", name)
            self._known[kind] = name
        return name

    def projection(self, kind: str, *, refresh: bool = False, min_weight: int = 1) -> str:
        """The catalog name of the published `tokens` or `chunks` projection.

        Queries use the projection the last completed ingest published, so a re-ingest in
        progress (whose batches bump the graph version) never makes queries re-project.
        `refresh=True` (the analytics stage after an ingest) projects the graph as it is
        now, publishes it and drops older versions. A published projection that vanished
        (server restart) is projected again on first use. The token graph keeps only
        CO_OCCURS edges of at least `min_weight`, and its name says so."""
        meta_key = f"gds_projection_{kind}"
        suffix = f"_w{min_weight}" if kind == "tokens" else ""
        if not refresh:
            published = self.published_name(kind, min_weight=min_weight)
            if published and published in self._projected:
                return published
            if published and published in self._catalog():
                self._projected.add(published)
                return published
        version = self.store.content_version() if kind == "tokens" else self.store.graph_version()
        name = self._name(kind, version) + suffix
        if not refresh and published:
            name = published  # published without a projection (`publish`), or it vanished
        with self._lock:
            catalog = self._catalog()
            if name not in catalog:
                t0 = time.perf_counter()
                try:
                    self._project(kind, name, min_weight)
                except Exception as exc:  # another process projected it first
                    if "already exists" not in str(exc):
                        raise
                self.last_projection_seconds[kind] = round(time.perf_counter() - t0, 3)
            self.store.set_meta(meta_key, name)
            prefix = self._prefix(kind)
            for old in catalog:
                if old.startswith(prefix) and old != name:
                    self.client.graph.drop(old, fail_if_missing=False)
                    self._projected.discard(old)
            self._known[kind] = name
            self._projected.add(name)
        return name

    def _project(self, kind: str, name: str, min_weight: int) -> None:
        check_projection_fits(self.store, kind, min_weight)
        if kind == "tokens":
            self.store.gds_query("project_token_graph", name=name, min_weight=min_weight)
        else:
            self.store.gds_query("project_chunk_graph", name=name)

    @staticmethod
    def _ppr_params(cfg: AlgorithmConfig) -> dict[str, Any]:
        return {
            "damping": cfg.ppr_damping,
            "max_iterations": cfg.ppr_max_iterations,
            "tolerance": cfg.ppr_tolerance,
            "concurrency": cfg.concurrency,
        }

    # ---- per-query algorithms --------------------------------------------------------
    def token_ppr(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float]:
        if not seeds:
            return {}

        def run(name: str) -> list[dict[str, Any]]:
            bounded = token_ppr_config(cfg, self.relationships(name), in_process=False)
            params = self._ppr_params(bounded)
            return self.store.gds_query(
                "token_ppr", name=name, seeds=sorted(seeds), top_k=top_k, **params
            )

        rows = self._on_projection("tokens", cfg.token_min_weight, run)
        return {r["token"]: float(r["score"]) for r in rows if r["score"] > 0}

    def relationships(self, name: str) -> int:
        """A projection's relationship count (read once per name: a projection never changes)."""
        if name not in self._relationships:
            rows = self.store.gds_query("gds_graph_relationships", name=name)
            if not rows:
                raise NeoragError(f"graph {name} does not exist in the GDS catalog")
            self._relationships[name] = int(rows[0]["relationships"])
        return self._relationships[name]

    def _on_projection(
        self, kind: str, min_weight: int, run: Callable[[str], list[dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        """Run against the current projection; if it vanished (a server restart empties the
        catalog, another process dropped it), project again and retry once."""
        try:
            return run(self.projection(kind, min_weight=min_weight))
        except NeoragError as exc:
            if "does not exist" not in str(exc):
                raise
            self._known.pop(kind, None)
            self._projected.clear()
            return run(self.projection(kind, min_weight=min_weight))

    def chunk_ppr(
        self, seeds: dict[str, float], candidates: Sequence[str], cfg: AlgorithmConfig
    ) -> dict[str, float]:
        members = list(dict.fromkeys(candidates))
        if not members or not any(s in set(members) for s in seeds):
            return {}
        name = f"{PREFIX}candidates_{uuid.uuid4().hex[:12]}"
        try:
            self.store.gds_query("project_candidate_subgraph", name=name, ids=members)
            rows = self.store.gds_query(
                "chunk_ppr",
                name=name,
                seeds=sorted(s for s in seeds if s in set(members)),
                **self._ppr_params(cfg),
            )
        finally:
            with contextlib.suppress(Exception):
                self.store.gds_query("gds_graph_drop", name=name)
        return {r["id"]: float(r["score"]) for r in rows}


class GdsHooks(AnalyticsHooks):
    """Leiden and FastRP in GDS over the published chunk projection; spectral in-process
    on the RELATED edges read back. `store` is the one the pipeline writes results to (the
    store `gds` runs its statements through)."""

    def __init__(self, gds: GdsAnalytics, store: GraphStore) -> None:
        self.gds = gds
        self.store = store
        self._queries = gds.store
        self._name = ""

    def prepare(self, cfg: AlgorithmConfig, report: AnalyticsReport, *, full: bool) -> None:
        t0 = time.perf_counter()
        if full:
            self.gds.projection("tokens", refresh=True, min_weight=cfg.token_min_weight)
            self._name = self.gds.projection("chunks", refresh=True)
        elif cfg.token_ppr == "gds":  # queries rank in GDS: project now, not on first use
            self.gds.projection("tokens", refresh=True, min_weight=cfg.token_min_weight)
        else:  # a patch: published now, projected when GDS is first asked (`publish`)
            self.gds.publish("tokens", min_weight=cfg.token_min_weight)
        report.seconds["projection"] = round(time.perf_counter() - t0, 3)

    def chunk_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        return self._queries.related_adjacency()

    def leiden(self, cfg: AlgorithmConfig) -> tuple[dict[str, int], float]:
        params = {
            "name": self._name,
            "seed": cfg.leiden_seed,
            "concurrency": cfg.concurrency,
            "gamma": cfg.leiden_gamma,
            "max_levels": cfg.leiden_max_levels,
            "tolerance": cfg.leiden_tolerance,
        }
        rows = self._queries.gds_query("leiden_stream", **params)
        stats = self._queries.gds_query("leiden_stats", **params)[0]
        assignment = _relabel({r["id"]: int(r["community"]) for r in rows})
        return assignment, float(stats["modularity"])

    def fastrp(self, cfg: AlgorithmConfig, report: AnalyticsReport) -> None:
        try:
            self._queries.gds_query(
                "fastrp_write",
                name=self._name,
                dimension=cfg.fastrp_dimension,
                seed=cfg.fastrp_seed,
                concurrency=cfg.concurrency,
                iteration_weights=list(cfg.fastrp_iteration_weights),
                normalization_strength=cfg.fastrp_normalization_strength,
            )
        except ClientError as exc:
            report.warnings.append(f"FastRP failed: {exc.message}")

    def publish(self) -> None:
        pass


def _relabel(assignment: dict[str, int]) -> dict[str, int]:
    """GDS community ids are arbitrary node ids; renumber 0..k-1 by size, then first chunk,
    so ids are comparable with the embedded backend's."""
    members: dict[int, list[str]] = {}
    for chunk, community in assignment.items():
        members.setdefault(community, []).append(chunk)
    order = sorted(members.values(), key=lambda cs: (-len(cs), min(cs)))
    return {chunk: new for new, cs in enumerate(order) for chunk in cs}
