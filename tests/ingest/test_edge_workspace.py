"""The edge workspace (a local copy of the edge corpus) lets an update read only the changed
documents from the store, and is never used unless it is the copy of the stored edges' build:
updates through it equal a fresh build exactly, on both backends; a copy left behind by a
refresh that did not save it, or a damaged file, is ignored and then rewritten."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from graph.types import ChunkRecord
from ingest.edges import semantic
from ingest.edges.corpus import EdgeCorpus
from ingest.edges.maintain import refresh_chunk_edges
from ingest.edges.vectors import SCALE, unit_quantised
from ingest.edges.workspace import FILE_NAME, EdgeWorkspace
from tests.ingest.edge_corpora import (
    ANALYZER,
    CFG,
    RandomCorpus,
    corpus_for,
    random_edit,
    write,
)
from tests.ingest.test_edge_updates import assert_equals_fresh_build


def grown_with(store, workspace: EdgeWorkspace, seed: int) -> RandomCorpus:
    corpus = corpus_for(store, seed)
    write(store, corpus, [corpus.new_doc() for _ in range(60)], [])
    first = refresh_chunk_edges(store, CFG, ANALYZER, workspace=workspace)
    assert (first.mode, first.source) == ("full", "store")
    assert workspace.path.exists()
    return corpus


def test_updates_through_the_workspace_equal_a_fresh_build(store, tmp_path: Path) -> None:
    workspace = EdgeWorkspace(tmp_path / FILE_NAME)
    corpus = grown_with(store, workspace, 31)
    runs = []
    for _ in range(8):
        random_edit(corpus, store)
        result = refresh_chunk_edges(store, CFG, ANALYZER, workspace=workspace)
        runs.append((result.mode, result.source))
        assert_equals_fresh_build(store)
    assert runs.count(("update", "workspace")) >= 6, runs
    assert ("update", "store") not in runs, runs


def test_a_stale_or_damaged_workspace_is_not_used(store, tmp_path: Path) -> None:
    workspace = EdgeWorkspace(tmp_path / FILE_NAME)
    corpus = grown_with(store, workspace, 32)
    # A refresh that does not save the copy (a crash after the edge write, or another
    # machine's ingest): the copy describes an older build from then on.
    random_edit(corpus, store)
    assert refresh_chunk_edges(store, CFG, ANALYZER).mode == "update"
    random_edit(corpus, store)
    stale = refresh_chunk_edges(store, CFG, ANALYZER, workspace=workspace)
    assert (stale.mode, stale.source) == ("update", "store")
    assert_equals_fresh_build(store)
    random_edit(corpus, store)
    again = refresh_chunk_edges(store, CFG, ANALYZER, workspace=workspace)
    assert again.source == "workspace"
    assert_equals_fresh_build(store)

    workspace.path.write_bytes(b"not a database" * 100)
    random_edit(corpus, store)
    damaged = refresh_chunk_edges(store, CFG, ANALYZER, workspace=workspace)
    assert (damaged.mode, damaged.source) == ("update", "store")
    assert_equals_fresh_build(store)


def test_the_copy_round_trips_every_fact_the_builders_read(embedded_store, tmp_path) -> None:
    corpus = RandomCorpus(33)
    write(embedded_store, corpus, [corpus.new_doc() for _ in range(12)], [])
    chunks = embedded_store.corpus()
    edge_corpus = EdgeCorpus(chunks, ANALYZER)
    workspace = EdgeWorkspace(tmp_path / FILE_NAME)
    workspace.replace(edge_corpus, "stamp-1")
    assert workspace.unchanged("stamp-2", []) is None
    changed = chunks[0].doc_id
    cached = workspace.unchanged("stamp-1", [changed])
    assert cached is not None
    want = [c for c in chunks if c.doc_id != changed]
    assert [c.id for c in cached.chunks] == [c.id for c in want]
    for got, c in zip(cached.chunks, want, strict=True):
        for name in ("doc_id", "ordinal", "title", "text", "section_path", "n_tokens"):
            assert getattr(got, name) == getattr(c, name), name
        assert (got.entities, got.links, got.questions) == (c.entities, c.links, c.questions)
        assert (got.embedding is None) == (c.embedding is None) == (c.id not in cached.units)
        if c.embedding is not None:
            assert np.array_equal(cached.units[c.id], unit_quantised(c.embedding[None])[0])
    assert cached.terms == {
        cid: dict(t) for cid, t in edge_corpus.terms.items() if cid in {c.id for c in want}
    }
    assert any(c.questions for c in want) and any(c.entities for c in want)


def test_known_quantised_rows_give_the_same_space() -> None:
    """Rows the workspace kept stand in for quantising those chunks again, and a corpus
    quantises each embedding once for SEMANTIC and the workspace alike."""
    rng = np.random.default_rng(5)
    chunks = [
        ChunkRecord(f"c{i:03d}", f"d{i // 3:02d}", i % 3, "", "", embedding=v)
        for i, v in enumerate(rng.normal(size=(50, 16)).astype(np.float32))
    ]
    plain = EdgeCorpus(chunks, ANALYZER)
    some = {c.id: plain.units[c.id].copy() for c in chunks if c.id < "c030"}
    # As the workspace gives them back: the embedding is the unit vector its row stands for.
    cached = [
        replace(c, embedding=some[c.id].astype(np.float32) / np.float32(SCALE))
        if c.id in some
        else c
        for c in chunks
    ]
    mixed = EdgeCorpus(cached, ANALYZER, known_units=some)
    assert plain.unit_rows[0] == mixed.unit_rows[0] == [c.id for c in chunks]
    assert np.array_equal(plain.unit_rows[1], mixed.unit_rows[1])
    for c in chunks:
        assert np.array_equal(plain.units[c.id], unit_quantised(c.embedding[None])[0])
    assert list(semantic.space(plain, CFG).tops(5)) == list(semantic.space(mixed, CFG).tops(5))
    assert np.shares_memory(plain.units["c007"], plain.unit_rows[1])
