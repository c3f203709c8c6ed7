"""DenseIndex: exact cosine top-k, reconstruction, updates by id that equal a fresh build,
the IVF index above the approximate threshold, and the array round trip the files use."""

from __future__ import annotations

import numpy as np
import pytest

from graph.config import SearchIndexConfig
from graph.dense import FLAT, IVF, DenseIndex


@pytest.fixture(scope="module")
def data() -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(42)
    vectors = rng.normal(size=(300, 16)).astype(np.float32) * rng.uniform(0.1, 5, (300, 1))
    return [f"chunk-{i:03d}" for i in range(300)], vectors


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
    assert hits[0] == ("chunk-003", pytest.approx(1.0, abs=1e-5))
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
    assert np.allclose(index.vectors(["chunk-005", "chunk-002"]), expected, atol=1e-6)
    assert np.allclose(index.vector("chunk-005"), expected[0], atol=1e-6)
    assert index.vectors([]).shape == (0, 16)
    with pytest.raises(KeyError):
        index.vector("nope")


def test_zero_vectors_score_zero_not_nan():
    index = DenseIndex.build(["a", "b"], np.array([[0.0, 0.0], [1.0, 1.0]]))
    hits = dict(index.search(np.array([1.0, 0.0]), 2))
    assert hits["a"] == 0.0
    assert hits["b"] == pytest.approx(np.sqrt(0.5))
    assert all(s == 0.0 for _, s in index.search(np.zeros(2), 2))


def test_empty_index():
    empty = DenseIndex.build([], np.empty((0, 8)))
    assert len(empty) == 0 and empty.dim == 8
    assert empty.search(np.ones(8), 5) == []
    assert empty.search_many(np.ones((2, 8)), 5) == [[], []]
    loaded = DenseIndex.from_arrays([], empty.to_arrays())
    assert len(loaded) == 0 and loaded.dim == 8


def test_an_index_of_no_chunks_round_trips():
    """A collection with no chunks yet has no dimension either (dim 0)."""
    nothing = DenseIndex.build([], np.empty((0, 0), dtype=np.float32))
    loaded = DenseIndex.from_arrays([], nothing.to_arrays())
    assert len(loaded) == 0 and loaded.dim == 0 and loaded.ids == []


def test_build_validates_input():
    with pytest.raises(ValueError):
        DenseIndex.build(["a", "b"], np.ones((3, 4)))
    with pytest.raises(ValueError):
        DenseIndex.build(["a", "a"], np.ones((2, 4)))
    with pytest.raises(ValueError):
        DenseIndex.build(["a"], np.ones(4))
    with pytest.raises(ValueError):
        DenseIndex.build(["a"], np.array([[np.nan, 1.0]]))


def test_ids_are_sorted_whatever_the_input_order():
    vectors = np.eye(3, dtype=np.float32)
    index = DenseIndex.build(["c", "a", "b"], vectors)
    assert index.ids == ["a", "b", "c"]
    assert index.search(vectors[0], 1)[0][0] == "c"
    assert np.array_equal(index.vector("a"), vectors[1])


def assert_same_index(a: DenseIndex, b: DenseIndex) -> None:
    assert a.ids == b.ids and a.kind == b.kind
    assert np.array_equal(a.vectors(a.ids), b.vectors(b.ids))  # bit for bit


def test_random_updates_equal_a_fresh_build():
    """Several seeded rounds of removals and additions: the updated flat index holds the
    same ids and vectors (bit for bit) and answers like a fresh build, ties included."""
    rng = np.random.default_rng(11)
    live = {f"d{i:04d}": rng.normal(size=24).astype(np.float32) * 3 for i in range(400)}
    live["dup-a"] = live["dup-b"] = np.ones(24, dtype=np.float32)  # a tie to break
    index = DenseIndex.build(list(live), np.stack(list(live.values())))
    next_id = 400
    for _ in range(6):
        removed = list(rng.choice(sorted(live), size=int(rng.integers(0, 40)), replace=False))
        for c in removed:
            del live[c]
        added = [f"d{next_id + i:04d}" for i in range(int(rng.integers(0, 40)))]
        next_id += len(added)
        vectors = rng.normal(size=(len(added), 24)).astype(np.float32)
        live.update(zip(added, vectors, strict=True))
        index.apply([*removed, "never-indexed"], added, vectors)
        fresh = DenseIndex.build(list(live), np.stack(list(live.values())))
        assert_same_index(index, fresh)
        queries = rng.normal(size=(8, 24)).astype(np.float32)
        queries[0] = 1.0
        assert index.search_many(queries, 7) == fresh.search_many(queries, 7)


def test_apply_rejects_ids_already_indexed_and_wrong_dimensions(data, index: DenseIndex):
    ids, vectors = data
    copy = DenseIndex.build(ids, vectors)
    with pytest.raises(ValueError):
        copy.apply([], ["chunk-001"], vectors[:1])
    with pytest.raises(ValueError):
        copy.apply([], ["new"], np.ones((1, 3)))
    copy.apply(["chunk-001"], ["chunk-001"], vectors[2:3])  # replacing is fine
    assert np.allclose(copy.vector("chunk-001"), index.vector("chunk-002"))


def test_neighbours_leave_the_chunk_itself_out(index: DenseIndex):
    rows = index.neighbours(["chunk-004", "chunk-010"], 5)
    for own, row in zip(["chunk-004", "chunk-010"], rows, strict=True):
        assert len(row) == 5 and own not in [c for c, _ in row]
        expected = [c for c, _ in index.search(index.vector(own), 6) if c != own][:5]
        assert [c for c, _ in row] == expected
    assert index.neighbours([], 3) == []
    with pytest.raises(KeyError):
        index.neighbours(["nope"], 3)


def test_array_round_trip_is_exact(data, index: DenseIndex):
    loaded = DenseIndex.from_arrays(index.ids, index.to_arrays())
    assert_same_index(loaded, index)
    with pytest.raises(ValueError):
        DenseIndex.from_arrays(index.ids[:-1], index.to_arrays())


def clustered(n: int, dim: int, seed: int) -> np.ndarray:
    """Unit vectors around 40 centres: the structure real embeddings have (uniform random
    vectors in high dimension have no near neighbours worth finding)."""
    centres = np.random.default_rng(1234).normal(size=(40, dim))
    rng = np.random.default_rng(seed)
    x = centres[rng.integers(0, 40, n)] + 0.35 * rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def recall_at(approximate: DenseIndex, exact: DenseIndex, queries: np.ndarray, k: int) -> float:
    hits = approximate.search_many(queries, k)
    truth = exact.search_many(queries, k)
    found = [len({c for c, _ in h} & {c for c, _ in t}) for h, t in zip(hits, truth, strict=True)]
    return sum(found) / (k * len(queries))


IVF_SMALL = SearchIndexConfig(approximate_above=1_000, ivf_nprobe=2)


def test_above_the_threshold_the_index_is_ivf_with_high_recall():
    vectors = clustered(3_000, 32, seed=5)
    ids = [f"v{i:05d}" for i in range(3_000)]
    approximate = DenseIndex.build(ids, vectors, IVF_SMALL)
    exact = DenseIndex.build(ids, vectors)
    assert approximate.kind == IVF and exact.kind == FLAT
    assert DenseIndex.build(ids[:1_000], vectors[:1_000], IVF_SMALL).kind == FLAT
    queries = clustered(200, 32, seed=6)
    assert approximate.nprobe == 2
    assert recall_at(approximate, exact, queries, 10) >= 0.9
    approximate.nprobe = 1  # one cell: visibly approximate, so this is no flat scan
    assert recall_at(approximate, exact, queries, 10) < 0.95
    approximate.nprobe = 10_000  # every cell: exact again
    assert recall_at(approximate, exact, queries, 10) == 1.0
    assert np.allclose(approximate.vectors(ids[:50]), exact.vectors(ids[:50]), atol=1e-6)


def test_ivf_updates_add_and_remove_by_id():
    vectors = clustered(3_000, 32, seed=7)
    ids = [f"v{i:05d}" for i in range(3_000)]
    index = DenseIndex.build(ids, vectors, IVF_SMALL)
    rng = np.random.default_rng(8)
    live = dict(zip(ids, vectors, strict=True))
    extra = clustered(600, 32, seed=9)
    for round_ in range(3):
        removed = list(rng.choice(sorted(live), size=150, replace=False))
        added = [f"n{round_}-{i:03d}" for i in range(200)]
        new = extra[round_ * 200 : (round_ + 1) * 200]
        index.apply(removed, added, new)
        for c in removed:
            del live[c]
        live.update(zip(added, new, strict=True))
        assert index.kind == IVF and index.ids == sorted(live)
        assert np.allclose(index.vectors(added), new, atol=1e-6)
        found = {
            c for row in index.search_many(np.stack([live[c] for c in added]), 1) for c, _ in row
        }
        assert found <= set(live) and not found & set(removed)
    exact = DenseIndex.build(list(live), np.stack(list(live.values())))
    assert recall_at(index, exact, clustered(200, 32, seed=10), 10) >= 0.9
    loaded = DenseIndex.from_arrays(index.ids, index.to_arrays(), nprobe=2)
    assert loaded.kind == IVF and loaded.ids == index.ids
    queries = clustered(20, 32, seed=12)
    assert loaded.search_many(queries, 5) == index.search_many(queries, 5)


def test_a_mapped_base_with_changes_laid_over_it_searches_as_a_fresh_build(tmp_path):  # type: ignore[no-untyped-def]
    """The query processes' index (graph/dense_mapped.py): the base file mapped read-only,
    removed chunks hidden, added ones searched beside it. On a flat base that is exactly a
    fresh build's top k; on an IVF base the added chunks are found exactly."""
    from graph.dense_mapped import MappedDenseIndex

    vectors = clustered(1_500, 32, seed=21)
    ids = [f"v{i:05d}" for i in range(1_500)]
    extra = clustered(40, 32, seed=22)
    added = [f"v{i:05d}x" for i in range(0, 400, 10)]  # interleaved with the base's ids
    removed = ids[::7]
    live = {c: v for c, v in zip(ids, vectors, strict=True) if c not in set(removed)}
    live.update(zip(added, extra, strict=True))
    fresh = DenseIndex.build(list(live), np.stack(list(live.values())))
    queries = clustered(30, 32, seed=23)
    for config in (SearchIndexConfig(), IVF_SMALL):
        base = DenseIndex.build(ids, vectors, config)
        path = tmp_path / f"{base.kind}.faiss"
        base.write_file(path)
        arrays = base.file_arrays()
        mapped = MappedDenseIndex.open(
            path,
            base.ids,
            arrays["labels"],
            kind=base.kind,
            nprobe=4,
            removed=removed,
            added_ids=added,
            added_vectors=extra,
        )
        assert mapped.ids == fresh.ids and len(mapped) == len(live)
        assert np.allclose(mapped.vectors(added + ids[1:5]), fresh.vectors(added + ids[1:5]))
        hits = mapped.search_many(queries, 10)
        assert all(not {c for c, _ in row} & set(removed) for row in hits)
        if base.kind == FLAT:
            expect = [
                sorted(r, key=lambda h: (-h[1], h[0])) for r in fresh.search_many(queries, 10)
            ]
            assert [[c for c, _ in r] for r in hits] == [[c for c, _ in r] for r in expect]
        else:
            mapped.nprobe = 10_000
            assert recall_at(mapped, fresh, queries, 10) == 1.0
        own = mapped.search_many(np.stack(extra[:5]), 1)
        assert [row[0][0] for row in own] == added[:5]  # an added chunk finds itself
        with pytest.raises(ValueError, match="read-only"):
            mapped.apply([], ["new"], extra[:1])
