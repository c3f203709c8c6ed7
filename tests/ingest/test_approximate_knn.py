"""SEMANTIC neighbours above the approximate threshold come from an IVF index: the edges
found are scored exactly, most exact edges are found, and the path is the one taken; when
the scanned cells cover the space, the approximate build is the exact one, through the
whole incremental pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.edges import topk
from ingest.edges.maintain import refresh_chunk_edges
from ingest.edges.vectors import Approximate, dense_space
from tests.ingest.edge_corpora import ANALYZER, CFG, random_edit
from tests.ingest.test_edge_updates import assert_equals_fresh_build, grown, stored_edges

K, FLOOR = 10, 0.3


def clustered(n: int, dim: int, seed: int) -> tuple[list[str], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n // 50, dim))
    rows = centres[rng.integers(0, len(centres), n)] + rng.normal(scale=0.5, size=(n, dim))
    return [f"c{i:05d}" for i in range(n)], list(rows.astype(np.float32))


def edges(space) -> dict[tuple[str, str], float]:
    return topk.build(space, "SEMANTIC", K, lambda s: s).weights


def test_indexed_neighbours_are_exactly_scored_and_mostly_found() -> None:
    ids, vectors = clustered(6000, 24, seed=3)
    exact = edges(dense_space(ids, vectors, FLOOR))
    space = dense_space(ids, vectors, FLOOR, Approximate(above=1000, nprobe=8, depth=32))
    assert space.approximate is not None
    found = edges(space)
    scorer = dense_space(ids, vectors, FLOOR)
    for a, b in list(found)[:2000]:
        want = scorer.exact_scores(scorer.index[a], np.asarray([scorer.index[b]]))[0]
        assert found[(a, b)] == want
    shared = set(found) & set(exact)
    assert len(shared) / len(exact) >= 0.9, len(shared) / len(exact)
    assert len(found) <= len(exact) * 1.05


def test_below_the_threshold_the_scan_is_exact() -> None:
    ids, vectors = clustered(1200, 16, seed=4)
    space = dense_space(ids, vectors, FLOOR, Approximate(above=1200, nprobe=1, depth=16))
    assert space.approximate is None
    assert edges(space) == edges(dense_space(ids, vectors, FLOOR))


def test_a_sparse_scan_of_few_cells_finds_fewer() -> None:
    """The approximate path is really taken: one cell of many misses neighbours."""
    ids, vectors = clustered(6000, 24, seed=5)
    exact = edges(dense_space(ids, vectors, FLOOR))
    narrow = edges(dense_space(ids, vectors, FLOOR, Approximate(above=0, nprobe=1, depth=32)))
    assert len(set(narrow) & set(exact)) < len(exact)


@pytest.mark.parametrize("seed", [3])
def test_incremental_edges_through_the_index_equal_a_fresh_build(store, seed: int) -> None:
    """About 150 chunks, threshold 50: the index has three cells and scans them all, so
    update and fresh build (both through the index) must agree exactly."""
    cfg = CFG.model_copy(update={"semantic_approximate_above": 50})
    corpus = grown(store, seed, cfg=cfg)
    assert_equals_fresh_build(store, cfg)
    for _ in range(4):
        random_edit(corpus, store)
        refresh_chunk_edges(store, cfg, ANALYZER)
        assert_equals_fresh_build(store, cfg)
    assert any(k == "SEMANTIC" for k, _, _ in stored_edges(store))


def test_few_rows_are_scanned_exactly_above_the_threshold() -> None:
    """An update's dirty chunks: exact partners, no index trained for them."""
    ids, vectors = clustered(6000, 24, seed=6)
    space = dense_space(ids, vectors, FLOOR, Approximate(above=0, nprobe=1, depth=32))
    exact = dense_space(ids, vectors, FLOOR)
    few = ids[:40]
    assert space.partners(few) == exact.partners(few)
    assert "_index" not in space.__dict__
