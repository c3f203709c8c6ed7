"""Incrementally maintained chunk edges equal a fresh build exactly, on both backends: after
seeded rounds of random edits (documents added, changed, removed; chunk ids kept across a
title change), after a crash between a write and the edge refresh, and after a write that
skipped the journal (which must fall back to a full build)."""

from __future__ import annotations

import pytest

from graph.types import EDGE_KINDS, RELATED
from ingest.config import EdgeConfig
from ingest.edges import journal
from ingest.edges.corpus import EdgeCorpus
from ingest.edges.journal import JOURNAL_KEY, STATE_KEY
from ingest.edges.kinds import build_all, states_of_build
from ingest.edges.maintain import refresh_chunk_edges
from ingest.edges.stored import decode_state
from tests.ingest.edge_corpora import (
    ANALYZER,
    CFG,
    RandomCorpus,
    corpus_for,
    random_edit,
    write,
)

TOLERANCE = 1e-9


def stored_edges(store) -> dict[tuple[str, str, str], float]:
    ids = [c.id for c in store.corpus()]
    return {(e.kind, e.src, e.dst): e.weight for e in store.neighbours(ids)}


def assert_equals_fresh_build(store, cfg: EdgeConfig = CFG) -> None:
    corpus = EdgeCorpus(store.corpus(), ANALYZER)
    built = build_all(corpus, cfg, ANALYZER)
    want = {(k, s, d): w for k, kind in built.items() for (s, d), w in kind.weights.items()}
    got = stored_edges(store)
    assert set(got) == set(want), sorted(set(got) ^ set(want))[:10]
    worst = max((abs(got[k] - want[k]) for k in want), default=0.0)
    assert worst <= TOLERANCE, worst
    states = {c: decode_state(s) for c, s in store.chunk_edge_states(list(corpus.by_id)).items()}
    assert states == states_of_build(built, corpus)


def grown(store, seed: int, docs: int = 60, cfg: EdgeConfig = CFG) -> RandomCorpus:
    """About 150 chunks, 100 with questions: both between the powers of two 2^6.5 and 2^7.5,
    where random edits rarely move a rounded corpus size."""
    corpus = corpus_for(store, seed)
    write(store, corpus, [corpus.new_doc() for _ in range(docs)], [])
    first = refresh_chunk_edges(store, cfg, ANALYZER)
    assert first.mode == "full" and first.reason == "no stored edge state"
    return corpus


@pytest.mark.parametrize("seed", [1, 2])
def test_random_edits_keep_edges_equal_to_a_fresh_build(store, seed: int) -> None:
    corpus = grown(store, seed)
    assert_equals_fresh_build(store)
    modes = []
    for _ in range(10):
        random_edit(corpus, store)
        result = refresh_chunk_edges(store, CFG, ANALYZER)
        modes.append((result.mode, result.reason))
        assert_equals_fresh_build(store)
    updates = [m for m, _ in modes if m == "update"]
    # Full builds only when a rounded corpus size moved; most rounds must be local.
    assert len(updates) >= 8, modes
    assert all("rounded" in reason for m, reason in modes if m == "full"), modes
    kinds = {k for k, _, _ in stored_edges(store)}
    assert kinds == {*EDGE_KINDS, RELATED}


def test_growth_across_a_power_of_two_rebuilds_in_full(store) -> None:
    corpus = grown(store, 3, docs=8)
    modes = []
    for _ in range(5):
        write(store, corpus, [corpus.new_doc() for _ in range(4)], [])
        result = refresh_chunk_edges(store, CFG, ANALYZER)
        modes.append(result.reason)
        assert_equals_fresh_build(store)
    assert any("rounded" in reason for reason in modes), modes
    assert "" in modes, modes


def test_crash_before_the_refresh_is_recovered(store) -> None:
    corpus = grown(store, 7)
    random_edit(corpus, store)  # written and journaled, the refresh never ran
    random_edit(corpus, store)
    result = refresh_chunk_edges(store, CFG, ANALYZER)
    assert_equals_fresh_build(store)
    again = refresh_chunk_edges(store, CFG, ANALYZER)
    assert again.mode == "current"
    assert result.mode in ("update", "full")


def test_a_write_without_journal_forces_a_full_build(store) -> None:
    corpus = grown(store, 11)
    random_edit(corpus, store, journal=False)
    result = refresh_chunk_edges(store, CFG, ANALYZER)
    assert result.mode == "full"
    assert result.reason == "documents changed without a journal entry"
    assert_equals_fresh_build(store)


@pytest.mark.parametrize("change", ["setting", "builder version"])
def test_a_changed_setting_or_builder_forces_a_full_build(
    store, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored edges were built by one configuration and builder: after a change of either,
    even a one-document change rebuilds every edge (with the new configuration)."""
    corpus = grown(store, 12)
    cfg = CFG
    if change == "setting":
        cfg = CFG.model_copy(update={"semantic_k": CFG.semantic_k + 2})
    else:
        monkeypatch.setattr(journal, "EDGE_BUILDER_VERSION", journal.EDGE_BUILDER_VERSION + 1)
    doc = sorted(corpus.docs)[3]
    corpus.change_doc(doc)
    write(store, corpus, [doc], [])
    result = refresh_chunk_edges(store, cfg, ANALYZER)
    assert result.mode == "full"
    assert result.reason == "edge configuration or builder version changed"
    assert_equals_fresh_build(store, cfg)
    again = sorted(corpus.docs)[4]
    corpus.change_doc(again)
    write(store, corpus, [again], [])
    assert refresh_chunk_edges(store, cfg, ANALYZER).mode == "update"  # settled on it


def test_one_changed_document_touches_only_its_neighbourhood(store) -> None:
    corpus = grown(store, 5, docs=60)
    before = stored_edges(store)
    doc = sorted(corpus.docs)[10]
    corpus.change_doc(doc)
    write(store, corpus, [doc], [])
    result = refresh_chunk_edges(store, CFG, ANALYZER)
    assert result.mode == "update"
    assert_equals_fresh_build(store)
    after = stored_edges(store)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # Writes also cover the edges of a chunk re-added under its old id (deleted with it).
    assert changed and len(changed) <= result.written + result.deleted < len(before) / 4


@pytest.mark.neo4j
def test_updates_in_one_collection_leave_another_untouched(neo4j_config) -> None:
    """Two collections of one database with the same corpus shape: incremental updates and
    a forced full build in the first change nothing of the second (edges, states, the
    edge bookkeeping in its meta), and each still equals its own fresh build."""
    from graph.neo4j.store import Neo4jStore
    from tests.conftest import fresh_collection

    first, second = (Neo4jStore(neo4j_config, fresh_collection()) for _ in range(2))
    try:
        corpora = {s.collection: grown(s, 21) for s in (first, second)}
        second_ids = [c.id for c in second.corpus()]
        kept_edges = stored_edges(second)
        kept_states = second.chunk_edge_states(second_ids)
        kept_meta = {k: second.get_meta(k) for k in (STATE_KEY, JOURNAL_KEY)}
        assert kept_edges and len(kept_states) == len(second_ids)
        modes = []
        for _ in range(4):
            random_edit(corpora[first.collection], first)
            modes.append(refresh_chunk_edges(first, CFG, ANALYZER).mode)
            assert_equals_fresh_build(first)
        assert "update" in modes, modes
        assert refresh_chunk_edges(first, CFG, ANALYZER, force=True).mode == "full"
        assert_equals_fresh_build(first)
        assert all(c.id.startswith(f"{first.collection}:") for c in first.corpus())

        assert stored_edges(second) == kept_edges
        assert second.chunk_edge_states(second_ids) == kept_states
        assert {k: second.get_meta(k) for k in kept_meta} == kept_meta
        assert refresh_chunk_edges(second, CFG, ANALYZER).mode == "current"
        assert_equals_fresh_build(second)
    finally:
        for store in (first, second):
            store.clear()
            store.close()
