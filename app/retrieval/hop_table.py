"""What TIGRAG's entity hops read, held in process per published index on a server backend.

Each hop reads the CITES edges and the entity mentions of its top chunks
(`GraphStore.citations_and_mentions`). On Neo4j that is a round trip per hop, two per
question, 5–15 ms each on this machine, while the whole table is small: one CITES list and
one mention list per chunk (2wiki-dev: 7.5k chunks, about 40k mentions). So a server
backend's engine copies the table once per published index (the same versioning as the
bridge graph: `Engine.derived`) on a background thread and answers hops from it; until the
copy is ready, and on the embedded backend whose reads are in process anyway, hops read
the store as before. Either way a hop sees the same edges in the same order, so rankings
do not depend on which path served them
(tests/test_backend_parity.py::test_hop_table_answers_what_the_store_would).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.types import ChunkEdge, EntityMention

if TYPE_CHECKING:
    from app.retrieval.base import RetrievalContext
    from graph.base import GraphStore

log = logging.getLogger(__name__)

HopRead = tuple[list[ChunkEdge], dict[str, list[EntityMention]]]


@dataclass(frozen=True, slots=True)
class HopTable:
    cites: dict[str, tuple[ChunkEdge, ...]]  # chunk id → CITES edges touching it
    mentions: dict[str, tuple[EntityMention, ...]]  # chunk id → mentions, store order

    def lookup(self, ids: Sequence[str]) -> HopRead:
        """`citations_and_mentions(ids)` from the table: each edge once, in id order."""
        unique = list(dict.fromkeys(ids))
        edges: dict[tuple[str, str], ChunkEdge] = {}
        for cid in unique:
            for e in self.cites.get(cid, ()):
                edges.setdefault((e.src, e.dst), e)
        mentions = {c: list(self.mentions[c]) for c in unique if c in self.mentions}
        return list(edges.values()), mentions


def build_hop_table(store: GraphStore, ids: Sequence[str]) -> HopTable:
    """The table of chunks `ids`, in two bulk reads (not one per hop)."""
    cites: dict[str, list[ChunkEdge]] = {}
    for e in store.neighbours(ids, kinds=["CITES"]):
        cites.setdefault(e.src, []).append(e)
        if e.dst != e.src:
            cites.setdefault(e.dst, []).append(e)
    mentions = store.chunk_entities(ids)
    return HopTable(
        {c: tuple(es) for c, es in cites.items()},
        {c: tuple(ms) for c, ms in mentions.items()},
    )


class HopReads:
    """Hop reads for one published index: the store's, until the table is copied."""

    def __init__(self, engine: RetrievalContext) -> None:
        self._engine = engine
        self._table: HopTable | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.failed: str | None = None

    @property
    def ready(self) -> bool:
        return self._table is not None

    def __call__(self, ids: Sequence[str]) -> HopRead:
        table = self._table
        if table is not None:
            return table.lookup(ids)
        self.start()
        return self._engine.store.citations_and_mentions(ids)

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._load, name="hop-table", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Load the table (on its thread) and wait for it; True when it is ready."""
        self.start()
        assert self._thread is not None
        self._thread.join(timeout)
        return self.ready

    def _load(self) -> None:
        try:
            self._table = build_hop_table(self._engine.store, list(self._engine.dense.ids))
        except Exception as exc:  # the store keeps answering hops; the next index retries
            # debug, not a warning: a one-question CLI run closes the store under the copy
            self.failed = str(exc)
            log.debug("hop table not copied, hops read the store: %s", exc)


def hop_reads(engine: RetrievalContext) -> HopReads | None:
    """The engine's table-backed hop reads on a server backend; None: read the store (as
    database serving always does: it copies nothing of the corpus)."""
    if not engine.store.remote or not engine.in_process:
        return None
    return engine.derived("hop table", (), lambda: HopReads(engine))
