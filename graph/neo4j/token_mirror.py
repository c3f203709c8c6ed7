"""A copy of the published token projection in the query process, for per-query PPR.

GDS runs PageRank as a Pregel job: on 2wiki-dev's token projection (35k nodes, 276k
relationships) one personalised run costs ~135 ms on a 2-core machine, ~11 ms per superstep,
and TIGRAG runs one per round, three per question. The same computation in process
(graph/algorithms/ppr.py: GDS's semantics, held to the server by the parity tests) takes
~3 ms. So while the projection is small enough to copy into every query process
(`local_ppr_max_relationships`), the Neo4j backend loads its edges once per published
version and runs PPR here; above that size, with `token_ppr=gds`, and while a copy is not
loaded yet, GDS runs it. Under `auto` the copy loads on a background thread, so no query
waits for it; GDS keeps the projection either way (it is what the copy is checked against,
and where Leiden, FastRP and large graphs run).

A newly published version is copied from the previous one when the kept copy holds it: each
change records the pairs it touched with their new weights (`TokenGraphChange`), and the
copy follows them (graph/token_changes.py) in NumPy instead of reading every pair over Bolt
again, which at 200k chunks took over a minute per change.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

from neo4j import ManagedTransaction

from graph.adjacency import symmetric
from graph.algorithms.ppr import NamedPpr, PprOperator
from graph.config import AlgorithmConfig
from graph.kept import STORE_ID, KeptGraph
from graph.neo4j.queries import NamedQueries
from graph.token_changes import TokenEdges, follow

if TYPE_CHECKING:
    from graph.neo4j.gds import GdsAnalytics

log = logging.getLogger(__name__)
RETRY_SECONDS = 5.0  # an ingest is changing the graph: try again after this long


class MirrorSource(NamedQueries, Protocol):
    """The store's statements and its GDS layer (the published projection's name)."""

    gds: GdsAnalytics


class TokenMirror:
    """`kept`: where the copy is kept on local disk, mapped back by a later process that
    finds the same projection of the same store (graph/kept.py): a restarted server then
    answers at full speed at once instead of after reading every relationship again."""

    def __init__(self, store: MirrorSource, kept: KeptGraph | None = None) -> None:
        self._store = store
        self._kept = kept
        self._lock = threading.Lock()
        self._ready: tuple[str, NamedPpr] | None = None
        self._loading: str | None = None
        self._declined: set[str] = set()
        self._retry_at = 0.0
        self.loads = 0
        self.followed = 0  # loads that followed recorded changes from a kept older copy

    @property
    def keeps(self) -> bool:
        """Whether copies are kept on disk for the next process."""
        return self._kept is not None

    @property
    def loaded(self) -> str | None:
        """The projection name the copy holds, if any."""
        ready = self._ready
        return ready[0] if ready else None

    def top(
        self, seeds: dict[str, float], cfg: AlgorithmConfig, top_k: int
    ) -> dict[str, float] | None:
        """The top-k tokens computed here, or None: run it on GDS."""
        if cfg.token_ppr == "gds":
            return None
        gds = self._store.gds
        name = gds.published_name("tokens", min_weight=cfg.token_min_weight)
        if name is None:
            name = gds.projection("tokens", min_weight=cfg.token_min_weight)
        ready = self._ready
        if ready is None or ready[0] != name:
            if cfg.token_ppr == "local":
                self.load(name, cfg)
            else:
                self._load_in_background(name, cfg)
            ready = self._ready
            if ready is None:
                return None
            # An older copy answers while the newly published one loads, as the embedded
            # backend's in-memory graph does: the query stays in process.
        return ready[1].top(seeds, cfg, top_k)

    def load(self, name: str, cfg: AlgorithmConfig) -> bool:
        """Copy projection `name` (blocking); False when it is not copied (too large, or an
        ingest changed the graph since it was published)."""
        with self._lock:
            if self._ready is not None and self._ready[0] == name:
                return True
            if name in self._declined or time.monotonic() < self._retry_at:
                return False
        store_id = self._store.get_meta(STORE_ID)
        key = f"{store_id}:{name}" if store_id and self._kept is not None else None
        found = self._kept.load(key) if self._kept is not None and key else None
        if found is not None:
            names, arrays = found
            with self._lock:
                self._ready = (name, NamedPpr(names, PprOperator.from_arrays(arrays)))
                self.loads += 1
            return True
        version = self._store.gds.projection_version("tokens", name)
        limit = cfg.local_ppr_max_relationships if cfg.token_ppr == "auto" else None
        edges = self._follow(store_id, version, cfg) if key else None
        if edges is not None and limit is not None and len(edges.a) * 2 > limit:
            with self._lock:
                self._declined.add(name)
            return False
        if edges is None:
            got = self._store.read_transaction(
                lambda tx: self._read(tx, version, cfg.token_min_weight, limit)
            )
            if got == "too large":
                with self._lock:
                    self._declined.add(name)
                return False
            if got is None:
                with self._lock:
                    self._retry_at = time.monotonic() + RETRY_SECONDS
                return False
            edges = TokenEdges.from_rows(*got)
        else:
            self.followed += 1
        texts = edges.names
        operator = PprOperator(symmetric(len(texts), edges.a, edges.b, edges.w))
        if self._kept is not None and key:
            self._kept.save(key, texts, {**operator.to_arrays(), **edges.arrays()})
        with self._lock:
            self._ready = (name, NamedPpr(texts, operator))
            self.loads += 1
        return True

    def _follow(
        self, store_id: str | None, version: int, cfg: AlgorithmConfig
    ) -> TokenEdges | None:
        """The kept copy of an older version of this store's token graph carried to
        `version` by the changes recorded since (graph/token_changes.py), or None when
        there is no such copy or a change between was not recorded (read it all)."""
        held = self._kept.held() if self._kept is not None else None
        if held is None or store_id is None:
            return None
        key, names, arrays = held
        held_store, _, held_name = key.partition(":")
        # the same store's token graph at the same edge threshold, an older version
        if held_store != store_id or not held_name.endswith(f"_w{cfg.token_min_weight}"):
            return None
        try:
            since = self._store.gds.projection_version("tokens", held_name)
        except ValueError:
            return None
        edges = TokenEdges.from_arrays(names, arrays)
        if edges is None or since >= version:
            return None
        changes = self._store.read("token_graph_changes", after=since, through=version)
        found = {(c["version"], c["part"]) for c in changes}
        wanted = {(c["version"], p) for c in changes for p in range(c["parts"])}
        if found != wanted or {v for v, _ in found} != set(range(since + 1, version + 1)):
            return None
        return follow(edges, changes, cfg.token_min_weight)

    def _read(
        self, tx: ManagedTransaction, version: int, min_weight: int, limit: int | None
    ) -> tuple[list[str], list[dict[str, Any]]] | str | None:
        """In one read transaction: None if the graph is no longer the published version."""
        if self._store.content_version_in(tx) != version:
            return None
        if limit is not None:
            size = self._store.run_in(tx, "projection_size_tokens", min_weight=min_weight)
            if size[0]["relationships"] > limit:
                return "too large"
        texts = sorted(r["text"] for r in self._store.run_in(tx, "all_tokens"))
        rows = self._store.run_in(tx, "token_graph_edges", min_weight=min_weight)
        if self._store.content_version_in(tx) != version:
            return None
        return texts, rows

    def _load_in_background(self, name: str, cfg: AlgorithmConfig) -> None:
        with self._lock:
            if self._loading is not None:
                return
            self._loading = name

        def run() -> None:
            try:
                self.load(name, cfg)
            except Exception as exc:  # GDS keeps answering; the next query tries again
                log.debug("token graph copy failed: %s", exc)
                with self._lock:
                    self._retry_at = time.monotonic() + RETRY_SECONDS
            finally:
                with self._lock:
                    self._loading = None

        threading.Thread(target=run, name="token-mirror", daemon=True).start()

    def wait(self, timeout: float = 60.0) -> None:
        """Until a background copy in progress is done (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        while self._loading is not None and time.monotonic() < deadline:
            time.sleep(0.02)
