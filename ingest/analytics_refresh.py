"""Which analytics an ingest runs after the chunk edges changed, and how stale they are.

A full pass (graph/analytics.py: Leiden, FastRP and spectral coordinates over the whole
chunk graph) costs seconds on a few thousand chunks and grows faster than the corpus, so a
small change does not pay it synchronously: the new chunks are placed locally
(`patch_chunk_analytics`) and the store records how many chunks changed since the last
full pass. Once that exceeds the policy's share, or on a small corpus, or whenever the edge
stage rebuilt in full or cannot say what changed (a crash recovery), the full pass runs.
`neorag status` shows the record; `neorag analytics` runs the full pass on demand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from graph.analytics import patch_chunk_analytics, run_chunk_analytics
from graph.base import AnalyticsReport, GraphStore
from graph.config import AlgorithmConfig
from ingest.config import AnalyticsPolicy

ANALYTICS_KEY = "analytics_state"


@dataclass(slots=True)
class AnalyticsState:
    version: int  # graph version the stored analytics belong to (full pass or patch)
    full_version: int  # graph version of the last full pass
    full_at: float  # when it finished (epoch seconds)
    stale_chunks: int  # chunks added or removed since then, placed by patches only

    @classmethod
    def load(cls, store: GraphStore) -> AnalyticsState | None:
        raw = store.get_meta(ANALYTICS_KEY)
        return cls(**json.loads(raw)) if raw else None

    def save(self, store: GraphStore) -> None:
        store.set_meta(ANALYTICS_KEY, json.dumps(asdict(self)))


@dataclass(slots=True)
class AnalyticsRun:
    mode: str  # "full", "patch" or "current"
    report: AnalyticsReport


def refresh_analytics(
    store: GraphStore,
    cfg: AlgorithmConfig,
    policy: AnalyticsPolicy,
    *,
    added: Sequence[str] | None,
    removed: int = 0,
    full: bool = False,
) -> AnalyticsRun:
    """`added`/`removed`: the chunks an incremental edge update added and removed, or None
    when the edges were rebuilt in full or are unchanged by this run."""
    state = AnalyticsState.load(store)
    version = store.graph_version()
    if not full and added is None and state is not None and state.version == version:
        return AnalyticsRun("current", AnalyticsReport())
    chunks = store.chunk_count()
    stale = None if state is None or added is None else state.stale_chunks + len(added) + removed
    if (
        full
        or stale is None
        or chunks < policy.full_below_chunks
        or stale > policy.max_stale_share * max(chunks, 1)
    ):
        report = run_chunk_analytics(store.analytics_hooks(), cfg)
        AnalyticsState(store.graph_version(), store.graph_version(), time.time(), 0).save(store)
        return AnalyticsRun("full", report)
    assert state is not None and added is not None
    report = patch_chunk_analytics(store.analytics_hooks(), cfg, added)
    state.version, state.stale_chunks = version, stale
    state.save(store)
    return AnalyticsRun("patch", report)


def staleness(store: GraphStore) -> dict[str, object]:
    """For `neorag status`: whether the analytics belong to the current graph."""
    state = AnalyticsState.load(store)
    if state is None:
        return {"state": "none"}
    current = state.version == store.graph_version()
    info: dict[str, object] = {
        "state": "fresh" if current and state.stale_chunks == 0 else "stale",
        "chunks_changed_since_full_pass": state.stale_chunks,
        "full_pass_graph_version": state.full_version,
        "full_pass_at": state.full_at,
    }
    if not current:
        info["note"] = "the graph changed after the last analytics run (re-run ingest)"
    return info
