"""Keep the stored chunk edges equal to a full build of the stored corpus, at the cost of the
change: an update when the journal describes the change, a full build otherwise.

A full build happens when nothing was built yet, the edge configuration or builder version
changed, something changed the store without journaling it (the digests disagree), the
change is large, or a rounded corpus size moved (`kinds.full_build_needed`). Either way the
edges, the per-chunk states, the new `EdgeState` and the emptied journal are written in one
transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from graph.base import GraphStore
from graph.types import ChunkEdge, ChunkEdgeChange
from ingest.config import EdgeConfig
from ingest.edges import kinds as all_kinds
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.indexed import IndexedCorpus, NeedsFullBuild
from ingest.edges.journal import (
    FULL_BUILD_SHARE,
    JOURNAL_KEY,
    STATE_KEY,
    EdgeJournal,
    EdgeState,
    config_digest,
    digest_sum,
)
from ingest.edges.model import KindChange
from ingest.edges.stored import ChunkState, StoredEdges, StoredStates, encode_state
from ingest.edges.topk import StateMissing
from ingest.edges.workspace import EdgeWorkspace
from ingest.indexes import SearchIndexes
from ingest.tokens import Analyzer


@dataclass(slots=True)
class EdgeRefresh:
    """What the edge stage did: `mode` is "full", "update" or "current" (nothing to do);
    `source` where the unchanged chunks were read: "store" or "workspace"."""

    mode: str
    reason: str = ""
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    written: int = 0
    deleted: int = 0
    source: str = ""
    seconds: dict[str, float] = field(default_factory=dict)


def pending(store: GraphStore) -> bool:
    """Whether the journal holds a change the stored edges do not reflect yet."""
    return not EdgeJournal.load(store).empty


def refresh_chunk_edges(
    store: GraphStore,
    cfg: EdgeConfig,
    analyzer: Analyzer,
    *,
    force: bool = False,
    workspace: EdgeWorkspace | None = None,
    indexes: SearchIndexes | None = None,
    entity_labels: Sequence[str] = (),
) -> EdgeRefresh:
    """`indexes`: the search files published for the current corpus; with them and a
    current `workspace`, an update reads only what it touches (ingest/edges/indexed.py:
    `EdgeRefresh.source` is "indexes"); otherwise it reads the whole corpus from the store
    ("store")."""
    t0 = time.perf_counter()
    state, journal = EdgeState.load(store), EdgeJournal.load(store)
    docs = store.documents()
    reason = _why_full(state, journal, docs, cfg, analyzer, force)
    if reason is None and journal.empty:
        return EdgeRefresh("current")
    seconds: dict[str, float] = {}
    if (
        reason is None
        and indexes is not None
        and workspace is not None
        and state is not None
        and state.questions is not None
        and workspace.current(store.get_meta(STATE_KEY))
    ):
        corpus = IndexedCorpus(store, indexes, analyzer, journal.docs, 0, entity_labels, workspace)
        removed_q = sum(1 for r in journal.removed.values() if r.has_questions)
        questions = state.questions + corpus.questions_added - removed_q
        corpus.terms._count = questions
        change = CorpusChange(corpus, set(journal.docs), journal.removed)
        seconds["read"] = round(time.perf_counter() - t0, 3)
        reason = _why_not_local(change, state)
        if reason is None:
            try:
                done = _update(store, change, cfg, analyzer, docs, StoredStates(store), seconds)
            except (StateMissing, NeedsFullBuild) as exc:
                reason = str(exc)
            else:
                gone = [*journal.removed, *(c.id for c in corpus.added_chunks)]
                keep = partial(workspace.update, gone, corpus.added_chunks)
                _save_workspace(store, keep, seconds)
                done.source = "indexes"
                return done
    chunks = store.corpus()
    seconds["read"] = round(time.perf_counter() - t0, 3)
    if reason is None:
        assert state is not None
        states = StoredStates(store)
        states.load(c.id for c in chunks)
        known = {
            c.id: terms
            for c in chunks
            if c.doc_id not in journal.docs and (terms := states.state(c.id).terms) is not None
        }
        change = CorpusChange(
            EdgeCorpus(chunks, analyzer, known), set(journal.docs), journal.removed
        )
        reason = _why_not_local(change, state)
        if reason is None:
            try:
                done = _update(store, change, cfg, analyzer, docs, states, seconds)
            except StateMissing as exc:
                reason = str(exc)
            else:
                if workspace is not None:
                    _save_workspace(
                        store, partial(workspace.replace, change.corpus.chunks), seconds
                    )
                done.source = "store"
                return done
    corpus = EdgeCorpus(chunks, analyzer)
    done = _full(store, corpus, cfg, analyzer, docs, reason, seconds)
    if workspace is not None:
        _save_workspace(store, partial(workspace.replace, corpus.chunks), seconds)
    done.source = "store"
    return done


def _save_workspace(
    store: GraphStore, save: Callable[[str], None], seconds: dict[str, float]
) -> None:
    """Stamp the copy with the edge state the store now holds (what the next refresh
    compares)."""
    t0 = time.perf_counter()
    stamp = store.get_meta(STATE_KEY)
    if stamp:
        save(stamp)
    seconds["workspace"] = round(time.perf_counter() - t0, 3)


def _why_full(
    state: EdgeState | None,
    journal: EdgeJournal,
    docs: dict,
    cfg: EdgeConfig,
    analyzer: Analyzer,
    force: bool,
) -> str | None:
    if force:
        return "forced"
    if state is None:
        return "no stored edge state"
    if state.config != config_digest(cfg, analyzer):
        return "edge configuration or builder version changed"
    if journal.overflow:
        return "large change"
    if not journal.consistent(state, docs):
        return "documents changed without a journal entry"
    return None


def _why_not_local(change: CorpusChange, state: EdgeState) -> str | None:
    old_chunks = change.old_count(len(change.corpus), lambda c: True, lambda r: True)
    if old_chunks != state.chunks:
        return f"journal accounts for {old_chunks} chunks, the build had {state.chunks}"
    if len(change.added) + len(change.removed) > FULL_BUILD_SHARE * max(len(change.corpus), 1):
        return "large change"
    return all_kinds.full_build_needed(change)


def _new_state(
    cfg: EdgeConfig, analyzer: Analyzer, docs: dict, chunks: int, questions: int
) -> dict[str, str]:
    state = EdgeState(config_digest(cfg, analyzer), digest_sum(docs.values()), chunks, questions)
    return {STATE_KEY: state.dumps(), JOURNAL_KEY: ""}


def _full(
    store: GraphStore,
    corpus: EdgeCorpus,
    cfg: EdgeConfig,
    analyzer: Analyzer,
    docs: dict,
    reason: str,
    seconds: dict[str, float],
) -> EdgeRefresh:
    t0 = time.perf_counter()
    built = all_kinds.build_all(corpus, cfg, analyzer)
    states = all_kinds.states_of_build(built, corpus)
    seconds["build"] = round(time.perf_counter() - t0, 3)
    edges: list[ChunkEdge] = []
    for kind in built.values():  # each kind's weights go once its edges are listed
        edges += kind.edges()
        kind.weights = {}
    t0 = time.perf_counter()
    store.apply_chunk_edge_change(
        ChunkEdgeChange(
            replace_all=True,
            write=edges,
            states={cid: encode_state(s) for cid, s in states.items()},
            meta=_new_state(cfg, analyzer, docs, len(corpus), len(corpus.terms)),
        )
    )
    seconds["write"] = round(time.perf_counter() - t0, 3)
    return EdgeRefresh(
        "full", reason, added=[c.id for c in corpus.chunks], written=len(edges), seconds=seconds
    )


def _update(
    store: GraphStore,
    change: CorpusChange,
    cfg: EdgeConfig,
    analyzer: Analyzer,
    docs: dict,
    states: StoredStates,
    seconds: dict[str, float],
) -> EdgeRefresh:
    t0 = time.perf_counter()
    stored = StoredEdges(store)
    changes = all_kinds.update_all(change, cfg, analyzer, stored, states)
    seconds["update"] = round(time.perf_counter() - t0, 3)
    new_states = _merged_states(changes, change, states)
    gone = sorted(c for c in change.removed if c not in change.corpus)
    deleted = [(kind, s, d) for kind, ch in changes.items() for s, d in sorted(ch.deleted)]
    written = [
        ChunkEdge(kind, s, d, w)
        for kind, ch in changes.items()
        for (s, d), w in sorted(ch.written.items())
    ]
    t0 = time.perf_counter()
    store.apply_chunk_edge_change(
        ChunkEdgeChange(
            delete=deleted,
            write=written,
            states={cid: encode_state(s) for cid, s in new_states.items()},
            drop_states=gone,
            meta=_new_state(cfg, analyzer, docs, len(change.corpus), len(change.corpus.terms)),
        )
    )
    seconds["write"] = round(time.perf_counter() - t0, 3)
    return EdgeRefresh(
        "update",
        added=sorted(change.added_ids),
        removed=gone,
        written=len(written),
        deleted=len(deleted),
        seconds=seconds,
    )


def _merged_states(
    changes: dict[str, KindChange], change: CorpusChange, states: StoredStates
) -> dict[str, ChunkState]:
    """New chunks get a fresh state; recomputed survivors keep their other kinds' keys."""
    touched = {cid for ch in changes.values() for cid in ch.kth} | change.added_ids
    out: dict[str, ChunkState] = {}
    for cid in sorted(touched):
        if cid in change.added_ids:
            merged = ChunkState(terms=all_kinds.state_terms(change.corpus, cid))
        else:
            old = states.state(cid)
            merged = ChunkState(dict(old.kth), old.terms)
        for kind, ch in changes.items():
            if cid in ch.kth:
                merged.kth[kind] = ch.kth[cid]
        out[cid] = merged
    return out
