"""DenseIndex: exact cosine top-k, reconstruction, and a persisted cache that knows when
it is stale or damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph.dense import DenseIndex


@pytest.fixture(scope="module")
def data() -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(42)
    vectors = rng.normal(size=(300, 16)).astype(np.float32) * rng.uniform(0.1, 5, (300, 1))
    return [f"chunk-{i}" for i in range(300)], vectors


@pytest.fixture(scope="module")
def index(data) -> DenseIndex:
    return DenseIndex.build(*data)


def brute_force(vectors: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    order = np.argsort(-cosines, kind="stable")[:k]
    return order, cosines[order]


def test_search_is_exact_cosine_top_k(data, index: DenseIndex):
    ids, vectors = data
    rng = np.random.default_rng(0)
    for _ in range(20):
        query = rng.normal(size=16).astype(np.float32) * 7  # scale must not matter
        order, cosines = brute_force(vectors, query, 10)
        hits = index.search(query, 10)
        assert [cid for cid, _ in hits] == [ids[i] for i in order]
        assert np.allclose([s for _, s in hits], cosines, atol=1e-5)


def test_search_many_matches_search(data, index: DenseIndex):
    queries = np.random.default_rng(1).normal(size=(5, 16)).astype(np.float32)
    batched = index.search_many(queries, 4)
    assert len(batched) == 5
    for query, hits in zip(queries, batched, strict=True):
        single = index.search(query, 4)
        assert [c for c, _ in hits] == [c for c, _ in single]
        assert np.allclose([s for _, s in hits], [s for _, s in single])
    assert index.search_many(np.empty((0, 16), dtype=np.float32), 3) == []


def test_k_larger_than_index_and_k_zero(data, index: DenseIndex):
    ids, vectors = data
    hits = index.search(vectors[3], 10_000)
    assert len(hits) == len(ids)
    assert hits[0] == ("chunk-3", pytest.approx(1.0, abs=1e-5))
    assert sorted(c for c, _ in hits) == sorted(ids)
    assert index.search(vectors[3], 0) == []


def test_wrong_query_shape_raises(index: DenseIndex):
    with pytest.raises(ValueError):
        index.search(np.zeros(15, dtype=np.float32), 3)
    with pytest.raises(ValueError):
        index.search(np.zeros((1, 16), dtype=np.float32), 3)


def test_vectors_are_reconstructed_unit_length(data, index: DenseIndex):
    _, vectors = data
    expected = vectors[[5, 2]] / np.linalg.norm(vectors[[5, 2]], axis=1, keepdims=True)
    assert np.allclose(index.vectors(["chunk-5", "chunk-2"]), expected, atol=1e-6)
    assert np.allclose(index.vector("chunk-5"), expected[0], atol=1e-6)
    assert index.vectors([]).shape == (0, 16)
    with pytest.raises(KeyError):
        index.vector("nope")


def test_zero_vectors_score_zero_not_nan():
    index = DenseIndex.build(["a", "b"], np.array([[0.0, 0.0], [1.0, 1.0]]))
    hits = dict(index.search(np.array([1.0, 0.0]), 2))
    assert hits["a"] == 0.0
    assert hits["b"] == pytest.approx(np.sqrt(0.5))
    assert all(s == 0.0 for _, s in index.search(np.zeros(2), 2))


def test_empty_index(tmp_path: Path):
    empty = DenseIndex.build([], np.empty((0, 8)))
    assert len(empty) == 0
    assert empty.search(np.ones(8), 5) == []
    assert empty.search_many(np.ones((2, 8)), 5) == [[], []]
    empty.save(tmp_path, "k")
    loaded = DenseIndex.load(tmp_path, "k")
    assert loaded is not None and len(loaded) == 0 and loaded.dim == 8


def test_build_validates_input():
    with pytest.raises(ValueError):
        DenseIndex.build(["a", "b"], np.ones((3, 4)))
    with pytest.raises(ValueError):
        DenseIndex.build(["a", "a"], np.ones((2, 4)))
    with pytest.raises(ValueError):
        DenseIndex.build(["a"], np.ones(4))
    with pytest.raises(ValueError):
        DenseIndex.build(["a"], np.array([[np.nan, 1.0]]))


def test_save_load_round_trip(tmp_path: Path, data, index: DenseIndex):
    ids, vectors = data
    directory = tmp_path / "dense"
    index.save(directory, "graph-v3:minilm")
    loaded = DenseIndex.load(directory, "graph-v3:minilm")
    assert loaded is not None
    assert loaded.ids == ids and len(loaded) == len(ids)
    assert loaded.search(vectors[7], 5) == index.search(vectors[7], 5)
    assert not list(directory.glob("*.tmp"))


def test_load_missing_or_stale(tmp_path: Path, index: DenseIndex):
    assert DenseIndex.load(tmp_path / "absent", "k") is None
    index.save(tmp_path, "k1")
    assert DenseIndex.load(tmp_path, "k2") is None
    assert DenseIndex.load(tmp_path, "k1") is not None


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "dense.faiss").write_bytes(b"garbage"),
        lambda d: (d / "dense.faiss").write_bytes((d / "dense.faiss").read_bytes()[:-100]),
        lambda d: (d / "dense.faiss").unlink(),
        lambda d: (d / "dense.json").write_text("{", encoding="utf-8"),
        lambda d: (d / "dense.json").write_text("[]", encoding="utf-8"),
    ],
    ids=["garbage-index", "truncated-index", "missing-index", "bad-json", "json-not-object"],
)
def test_load_corrupt_returns_none(tmp_path: Path, index: DenseIndex, damage):
    index.save(tmp_path, "k")
    damage(tmp_path)
    assert DenseIndex.load(tmp_path, "k") is None


def test_load_rejects_an_index_file_from_another_save(tmp_path: Path, index, data):
    """A crash between the index and json writes leaves a mismatched pair: must be stale."""
    ids, vectors = data
    index.save(tmp_path / "a", "k")
    DenseIndex.build(ids[:10], vectors[:10]).save(tmp_path / "b", "k")
    (tmp_path / "a" / "dense.faiss").write_bytes((tmp_path / "b" / "dense.faiss").read_bytes())
    assert DenseIndex.load(tmp_path / "a", "k") is None
