"""Pure checks of graph.algorithms against hand computations and closed forms.

Parity with the real GDS server is tested elsewhere (cross-backend tests); here every
expected value comes from arithmetic done by hand or a small dense linear-algebra solve.
"""

from __future__ import annotations

import igraph as ig
import numpy as np
import pytest
from scipy import sparse

import graph.algorithms.spectral as spectral_mod
from graph.algorithms import (
    PprOperator,
    canonical_labels,
    fastrp,
    leiden,
    modularity,
    personalized_pagerank,
    spectral_coordinates,
)
from graph.algorithms.fastrp import random_vectors
from graph.config import AlgorithmConfig


def _sym(n: int, edges: list[tuple[int, int, float]]) -> sparse.csr_matrix:
    rows = [a for a, b, _ in edges] + [b for a, b, _ in edges]
    cols = [b for a, b, _ in edges] + [a for a, b, _ in edges]
    vals = [w for *_, w in edges] * 2
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n, n), dtype=np.float64)


def _random_graph(n: int, m: int, seed: int) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    w = rng.integers(1, 9, keep.sum()).astype(float)
    upper = sparse.csr_matrix((w, (a[keep], b[keep])), shape=(n, n))
    return (upper + upper.T).tocsr()


def _closed_form_ppr(adj: sparse.csr_matrix, seeds: list[int], d: float) -> np.ndarray:
    """Limit of GDS's push iteration: (1-d)·(I - d·A·D⁻¹)⁻¹·s, dangling nodes absorb."""
    a = adj.toarray()
    deg = a.sum(axis=1)
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    s = np.zeros(a.shape[0])
    s[seeds] = 1.0
    return (1 - d) * np.linalg.solve(np.eye(a.shape[0]) - d * a.T * inv[None, :], s)


# ---- personalised PageRank ------------------------------------------------------------


def test_ppr_path_by_hand_with_tolerance_truncation() -> None:
    # 0-1-2, seed 0. Superstep 0 sends .15 to node 1; superstep 1: δ1 = .85·.15 = .1275 > .1
    # so node 1 sends .06375 both ways; superstep 2: δ0 = δ2 = .0541875 ≤ .1, halt.
    adj = _sym(3, [(0, 1, 1.0), (1, 2, 1.0)])
    cfg = AlgorithmConfig(ppr_damping=0.85, ppr_max_iterations=20, ppr_tolerance=0.1)
    run = PprOperator(adj).run_stats({0: 1.0}, cfg)
    np.testing.assert_allclose(run.scores, [0.2041875, 0.1275, 0.0541875], rtol=0, atol=1e-15)
    assert (run.ran_iterations, run.did_converge) == (2, True)


def test_ppr_max_iterations_counts_superstep_zero() -> None:
    adj = _sym(3, [(0, 1, 1.0), (1, 2, 3.0)])
    one = AlgorithmConfig(ppr_max_iterations=1)
    two = AlgorithmConfig(ppr_max_iterations=2)
    # maxIterations=1 is only the initial superstep: the initial values, unconverged.
    run = PprOperator(adj).run_stats({1: 1.0}, one)
    np.testing.assert_allclose(run.scores, [0.0, 0.15, 0.0], rtol=0, atol=1e-16)
    assert (run.ran_iterations, run.did_converge) == (1, False)
    # One push: node 1 (weighted degree 4) sends .15·1/4 to node 0 and .15·3/4 to node 2.
    scores = personalized_pagerank(adj, {1: 1.0}, two)
    np.testing.assert_allclose(scores, [0.85 * 0.0375, 0.15, 0.85 * 0.1125], atol=1e-15)


@pytest.mark.parametrize("weighted", [True, False])
def test_ppr_self_loop_is_traversed_twice(weighted: bool) -> None:
    # One stored loop of weight 1 at node 0 is 2 on the diagonal of A = U + Uᵀ; GDS's
    # undirected projection sends along it twice: degree 3, node 0 keeps 2/3 of its push.
    adj = sparse.csr_matrix(np.array([[2.0, 1.0], [1.0, 0.0]]))
    scores = personalized_pagerank(
        adj, {0: 1.0}, AlgorithmConfig(ppr_max_iterations=2), weighted=weighted
    )
    np.testing.assert_allclose(scores, [0.15 + 0.85 * 0.1, 0.85 * 0.05], atol=1e-15)


@pytest.mark.parametrize("weighted", [True, False])
def test_ppr_converges_to_closed_form(weighted: bool) -> None:
    # A star with weighted spokes, a tail and an isolated node (6).
    adj = _sym(7, [(0, 1, 1.0), (0, 2, 2.0), (0, 3, 3.0), (0, 4, 4.0), (4, 5, 0.5)])
    cfg = AlgorithmConfig(ppr_damping=0.85, ppr_max_iterations=5000, ppr_tolerance=1e-15)
    expected = _closed_form_ppr(adj if weighted else (adj > 0).astype(float), [2, 5], 0.85)
    run = PprOperator(adj, weighted=weighted).run_stats({2: 1.0, 5: 1.0}, cfg)
    assert run.did_converge
    np.testing.assert_allclose(run.scores, expected, rtol=1e-12, atol=1e-14)
    assert run.scores[6] == 0.0


def test_ppr_seed_mass_is_not_normalised_and_dangling_keeps_it() -> None:
    adj = _sym(3, [(0, 1, 1.0)])  # node 2 isolated
    scores = personalized_pagerank(adj, {2: 1.0, 0: 1.0}, AlgorithmConfig())
    assert scores[2] == pytest.approx(0.15)  # 1-d per source, never divided by |sources|
    assert scores[0] + scores[1] > 0.15


def test_ppr_without_seeds_is_global_pagerank() -> None:
    ring = _sym(5, [(i, (i + 1) % 5, 1.0) for i in range(5)])
    cfg = AlgorithmConfig()
    scores = personalized_pagerank(ring, {}, cfg)
    np.testing.assert_allclose(scores, np.full(5, scores[0]))
    # Every node starts at 1-d and on a regular graph keeps receiving d times what it sent.
    steps = cfg.ppr_max_iterations
    assert scores[0] == pytest.approx(0.15 * sum(0.85**k for k in range(steps)))


def test_ppr_seed_weights_ignored_by_default_and_linear_when_enabled() -> None:
    adj = _random_graph(40, 120, seed=3)
    cfg = AlgorithmConfig(ppr_max_iterations=3000, ppr_tolerance=1e-15)
    op = PprOperator(adj)
    plain = op.run({0: 1.0, 7: 1.0}, cfg)
    np.testing.assert_array_equal(op.run({0: 5.0, 7: 0.5}, cfg), plain)
    weighted = op.run({0: 2.0, 7: 1.0}, cfg, seed_weights=True)
    expected = 2 * op.run({0: 1.0}, cfg) + op.run({7: 1.0}, cfg)
    np.testing.assert_allclose(weighted, expected, rtol=1e-10)


def test_ppr_operator_is_reusable_and_float32_is_close() -> None:
    adj = _random_graph(200, 800, seed=1)
    cfg = AlgorithmConfig()
    op64, op32 = PprOperator(adj), PprOperator(adj, dtype=np.float32)
    first = op64.run({3: 1.0, 9: 1.0}, cfg)
    np.testing.assert_array_equal(op64.run({3: 1.0, 9: 1.0}, cfg), first)
    np.testing.assert_allclose(op32.run({3: 1.0, 9: 1.0}, cfg), first, rtol=1e-4, atol=1e-9)
    with pytest.raises(IndexError):
        op64.run({200: 1.0}, cfg)


def test_ppr_empty_graph() -> None:
    assert personalized_pagerank(sparse.csr_matrix((0, 0)), {}, AlgorithmConfig()).shape == (0,)


# ---- Leiden ---------------------------------------------------------------------------


def _two_cliques() -> sparse.csr_matrix:
    edges = [(i, j, 1.0) for i in range(5) for j in range(i + 1, 5)]
    edges += [(i + 5, j + 5, 1.0) for i in range(5) for j in range(i + 1, 5)]
    edges.append((4, 5, 1.0))
    return _sym(10, edges)


def test_leiden_two_cliques_and_hand_modularity() -> None:
    labels, q = leiden(_two_cliques(), AlgorithmConfig())
    np.testing.assert_array_equal(labels, [0] * 5 + [1] * 5)
    # m = 21; each side: 10 inner edges, volume 21 -> Q = 2·(10/21 - (21/42)²) = 20/21 - 1/2.
    assert q == pytest.approx(20 / 21 - 0.5, abs=1e-12)


def test_leiden_isolated_empty_and_edgeless() -> None:
    adj = sparse.block_diag([_two_cliques(), sparse.csr_matrix((2, 2))]).tocsr()
    labels, q = leiden(adj, AlgorithmConfig())
    assert labels[10] != labels[11]
    assert labels[10] not in labels[:10] and labels[11] not in labels[:10]
    assert sorted(set(labels.tolist())) == [0, 1, 2, 3]
    assert q == pytest.approx(20 / 21 - 0.5, abs=1e-12)
    empty_labels, empty_q = leiden(sparse.csr_matrix((0, 0)), AlgorithmConfig())
    assert empty_labels.shape == (0,) and empty_q == 0.0
    lone, lone_q = leiden(sparse.csr_matrix((3, 3)), AlgorithmConfig())
    np.testing.assert_array_equal(lone, [0, 1, 2])
    assert lone_q == 0.0


def test_leiden_is_deterministic_and_modularity_matches_igraph() -> None:
    adj = _random_graph(300, 900, seed=5)
    cfg = AlgorithmConfig(leiden_gamma=1.2, leiden_seed=7)
    labels, q = leiden(adj, cfg)
    again, q_again = leiden(adj, cfg)
    np.testing.assert_array_equal(labels, again)
    assert q == q_again
    upper = sparse.triu(adj).tocoo()
    g = ig.Graph(n=300, edges=list(zip(upper.row.tolist(), upper.col.tolist(), strict=True)))
    ref = g.modularity(labels.tolist(), weights=upper.data.tolist(), resolution=1.2)
    assert q == pytest.approx(ref, abs=1e-12)
    assert modularity(adj, labels, 1.2) == pytest.approx(ref, abs=1e-12)


def test_canonical_labels_orders_by_size_then_first_member() -> None:
    # 7 has three members; 3 and 9 two each, and 3 shows up first.
    labels = canonical_labels(np.array([7, 3, 3, 9, 7, 7, 9]))
    np.testing.assert_array_equal(labels, [0, 1, 1, 2, 0, 0, 2])


# ---- FastRP ---------------------------------------------------------------------------


def test_fastrp_shape_determinism_and_isolated_nodes() -> None:
    adj = sparse.block_diag([_random_graph(50, 200, seed=2), sparse.csr_matrix((1, 1))]).tocsr()
    cfg = AlgorithmConfig(fastrp_dimension=32)
    emb = fastrp(adj, cfg)
    assert emb.shape == (51, 32) and emb.dtype == np.float32
    assert np.all(np.isfinite(emb))
    np.testing.assert_array_equal(emb, fastrp(adj, cfg))
    np.testing.assert_array_equal(emb, fastrp(adj, cfg, seed=cfg.fastrp_seed))
    assert not np.array_equal(emb, fastrp(adj, cfg, seed=cfg.fastrp_seed + 1))
    np.testing.assert_array_equal(emb[50], np.zeros(32, dtype=np.float32))
    # Two iterations of weight 1 each add a unit vector: norms lie in (0, 2] with edges.
    norms = np.linalg.norm(emb, axis=1)
    has_edges = np.diff(adj.indptr) > 0
    assert np.all(norms[has_edges] > 0) and np.all(norms <= 2 + 1e-5)
    np.testing.assert_array_equal(norms[~has_edges], 0.0)
    assert fastrp(sparse.csr_matrix((0, 0)), cfg).shape == (0, 32)


def test_fastrp_random_vectors_are_very_sparse_projections() -> None:
    dim = 64
    keys = np.arange(4000)
    vecs = random_vectors(np.full(4000, 5), dim, 42, 0.0, keys)
    value = np.sqrt(3.0 / dim)
    assert set(np.unique(np.round(vecs / value, 9)).tolist()) == {-1.0, 0.0, 1.0}
    assert np.mean(vecs > 0) == pytest.approx(1 / 6, abs=0.01)
    assert np.mean(vecs < 0) == pytest.approx(1 / 6, abs=0.01)
    # A node's vector depends only on (seed, key): not on its position or other nodes.
    subset = random_vectors(np.full(2, 5), dim, 42, 0.0, keys[[17, 3]])
    np.testing.assert_array_equal(subset, vecs[[17, 3]])
    # Normalisation strength scales by degree^β.
    scaled = random_vectors(np.full(2, 4), dim, 42, 0.5, keys[[17, 3]])
    np.testing.assert_allclose(scaled, 2 * vecs[[17, 3]])


def test_fastrp_matches_the_algorithm_shape() -> None:
    adj = _random_graph(30, 90, seed=4)
    cfg = AlgorithmConfig(fastrp_dimension=16, fastrp_iteration_weights=(0.5, 2.0))
    deg = np.diff(adj.indptr)
    h0 = random_vectors(deg, 16, cfg.fastrp_seed, 0.0, np.arange(30))
    h1 = (adj @ h0) / deg[:, None]  # weighted sum over the relationship *count*
    h2 = (adj @ h1) / deg[:, None]

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    expected = 0.5 * unit(h1) + 2.0 * unit(h2)
    np.testing.assert_allclose(fastrp(adj, cfg), expected, rtol=1e-5, atol=1e-6)
    unweighted = (adj > 0).astype(float)
    np.testing.assert_array_equal(fastrp(adj, cfg, weighted=False), fastrp(unweighted, cfg))


# ---- spectral coordinates ---------------------------------------------------------------


def _laplacian(adj: sparse.csr_matrix) -> np.ndarray:
    a = adj.toarray()
    deg = a.sum(axis=1)
    inv = np.divide(1.0, np.sqrt(deg), out=np.zeros_like(deg), where=deg > 0)
    return np.diag((deg > 0).astype(float)) - inv[:, None] * a * inv[None, :]


def test_spectral_path_graph_matches_analytic_eigenvalues() -> None:
    n, dim = 12, 4
    adj = _sym(n, [(i, i + 1, 1.0) for i in range(n - 1)])
    x = spectral_coordinates(adj, dim).astype(np.float64)
    assert x.shape == (n, dim)
    lap = _laplacian(adj)
    rayleigh = np.einsum("ij,ij->j", x, lap @ x)
    # Normalised Laplacian of the path P_n: λ_k = 1 - cos(πk/(n-1)); k=0 is trivial.
    expected = 1 - np.cos(np.pi * np.arange(1, dim + 1) / (n - 1))
    np.testing.assert_allclose(rayleigh, expected, atol=1e-6)
    np.testing.assert_allclose(x.T @ x, np.eye(dim), atol=1e-6)
    np.testing.assert_allclose(lap @ x, x * expected, atol=1e-5)
    # Sign convention: the largest-magnitude entry of each column is positive; on the
    # path's mirror-symmetric ties the first (lowest index) of them decides.
    near_max = np.abs(x) >= np.abs(x).max(axis=0) * (1 - 1e-4)
    assert np.all(x[np.argmax(near_max, axis=0), np.arange(dim)] > 0)
    assert x[0, 0] > 0 > x[-1, 0]


def test_spectral_disconnected_isolated_and_tiny() -> None:
    path = [(i, i + 1, 1.0) for i in range(5)]
    adj = _sym(13, path + [(a + 6, b + 6, w) for a, b, w in path])  # two P6, node 12 alone
    x = spectral_coordinates(adj, 3).astype(np.float64)
    deg = np.asarray(adj.sum(axis=1)).ravel()
    for comp in (slice(0, 6), slice(6, 12)):
        trivial = np.zeros(13)
        trivial[comp] = np.sqrt(deg[comp])
        np.testing.assert_allclose(trivial @ x, 0.0, atol=1e-6)
    np.testing.assert_array_equal(x[12], 0.0)
    # Both components share P6's λ1 = 1 - cos(π/5); the third is λ2 = 1 - cos(2π/5).
    rayleigh = np.einsum("ij,ij->j", x, _laplacian(adj) @ x)
    np.testing.assert_allclose(rayleigh, 1 - np.cos(np.pi * np.array([1, 1, 2]) / 5), atol=1e-6)
    # 3 nodes, 1 component: only 2 non-trivial eigenvectors exist; the rest is zero padding.
    tiny = spectral_coordinates(_sym(3, [(0, 1, 1.0), (1, 2, 1.0)]), 5)
    assert tiny.shape == (3, 5)
    assert np.all(np.linalg.norm(tiny[:, :2], axis=0) > 0.99)
    np.testing.assert_array_equal(tiny[:, 2:], 0.0)
    assert spectral_coordinates(sparse.csr_matrix((4, 4)), 3).shape == (4, 3)
    assert spectral_coordinates(sparse.csr_matrix((0, 0)), 3).shape == (0, 3)


def test_spectral_sparse_solver_agrees_with_dense(monkeypatch: pytest.MonkeyPatch) -> None:
    adj = sparse.block_diag([_random_graph(400, 2400, seed=9), _random_graph(80, 400, seed=1)])
    adj = adj.tocsr()
    dense = spectral_coordinates(adj, 6)
    monkeypatch.setattr(spectral_mod, "DENSE_BELOW", 0)
    sparse_result = spectral_coordinates(adj, 6)
    np.testing.assert_allclose(sparse_result, dense, atol=1e-5)
    np.testing.assert_array_equal(sparse_result, spectral_coordinates(adj, 6))


def test_ppr_mat_vec_keeps_to_a_one_core_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API worker given one core runs the big-graph mat-vec on its own thread; with two
    it splits the rows over the pool. Both give the same scores."""
    from graph.algorithms import ppr

    adj = _random_graph(3000, ppr._PARALLEL_MIN_NNZ, seed=5)
    op = PprOperator(adj)
    assert op._blocks, "large enough to run in row blocks"
    cfg = AlgorithmConfig()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    used: list[int] = []
    real_pool = ppr._pool

    def counting_pool():  # type: ignore[no-untyped-def]
        used.append(1)
        return real_pool()

    monkeypatch.setattr(ppr, "_pool", counting_pool)
    parallel = op.run({0: 1.0, 11: 1.0}, cfg)
    assert used, "two cores: row blocks on the pool"
    used.clear()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    np.testing.assert_array_equal(op.run({0: 1.0, 11: 1.0}, cfg), parallel)
    assert not used, "one core: no pool"


def test_sparse_supersteps_equal_full_mat_vecs() -> None:
    """A superstep with few senders pushes along their columns only; the scores are those
    of full mat-vecs (a graph with many more nodes than seeds takes the sparse route)."""
    from graph.algorithms import ppr as ppr_module

    rng = np.random.default_rng(3)
    n = 400
    dense = sparse.random(n, n, density=0.02, random_state=4, format="csr")
    adj = dense + dense.T
    op = PprOperator(adj)
    cfg = AlgorithmConfig(ppr_max_iterations=30, ppr_tolerance=1e-9)
    seeds = {int(i): 1.0 for i in rng.choice(n, 3, replace=False)}
    sparse_run = op.run(seeds, cfg)
    saved = ppr_module._SPARSE_SHARE
    try:
        ppr_module._SPARSE_SHARE = -1.0  # never sparse
        dense_run = op.run(seeds, cfg)
    finally:
        ppr_module._SPARSE_SHARE = saved
    np.testing.assert_allclose(sparse_run, dense_run, rtol=1e-12, atol=1e-15)
    seed_relationships = sum(op.push[:, i].nnz for i in seeds)
    assert seed_relationships <= ppr_module._SPARSE_SHARE * op.push.nnz  # a sparse superstep


def test_per_degree_rule_stops_a_hub_whose_share_per_neighbour_is_small() -> None:
    """GDS's rule sends a hub's whole delta on to its 50 leaves; the per-degree rule holds it
    when the delta per unit of degree is below the tolerance (the hub keeps its own score)."""
    leaves = 50
    adj = sparse.lil_matrix((leaves + 1, leaves + 1))
    for leaf in range(1, leaves + 1):
        adj[0, leaf] = adj[leaf, 0] = 1.0
    op = PprOperator(adj.tocsr())
    base = AlgorithmConfig(ppr_tolerance=0.01)
    delta_rule = op.run({1: 1.0}, base)
    per_degree = op.run({1: 1.0}, base.model_copy(update={"ppr_send_rule": "per_degree"}))
    hub_delta = 0.85 * 0.15  # what leaf 1's first push gives the hub
    assert hub_delta > 0.01 > hub_delta / leaves
    assert delta_rule[2:].min() > 0.0
    assert per_degree[2:].max() == 0.0
    assert per_degree[0] == pytest.approx(delta_rule[0])
    assert per_degree[1] == pytest.approx(0.15)


def test_token_ppr_config_bounds_large_graphs_only() -> None:
    from graph.algorithms.ppr import token_ppr_config

    cfg = AlgorithmConfig(
        token_ppr_bounded_above=100,
        token_ppr_bounded_tolerance=1e-5,
        token_ppr_per_degree_tolerance=3e-7,
    )
    assert token_ppr_config(cfg, 100) == cfg
    bounded = token_ppr_config(cfg, 101)
    assert (bounded.ppr_send_rule, bounded.ppr_tolerance) == ("per_degree", 3e-7)
    gds = token_ppr_config(cfg, 101, in_process=False)  # GDS has only its delta rule
    assert (gds.ppr_send_rule, gds.ppr_tolerance) == ("delta", 1e-5)
    delta = cfg.model_copy(update={"token_ppr_bounded_rule": "delta"})
    in_process = token_ppr_config(delta, 101)
    assert (in_process.ppr_send_rule, in_process.ppr_tolerance) == ("delta", 1e-5)


def test_ppr_operator_from_its_arrays_runs_alike_without_copying(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An operator kept on disk (graph/kept.py) is rebuilt from mapped arrays: the same
    scores, bit for bit, in row blocks and sparse supersteps alike, with no array copied."""
    from graph.algorithms import ppr

    adj = _random_graph(3000, ppr._PARALLEL_MIN_NNZ, seed=7)
    op = PprOperator(adj)
    for name, array in op.to_arrays().items():
        np.save(tmp_path / f"{name}.npy", array)
    mapped = {p.stem: np.load(p, mmap_mode="r") for p in tmp_path.glob("*.npy")}
    again = PprOperator.from_arrays(mapped)
    assert again._blocks and not again.push.data.flags.owndata
    assert all(not b.data.flags.owndata for b in again._blocks)
    cfg = AlgorithmConfig(ppr_max_iterations=20, ppr_tolerance=1e-9)
    for seeds in ({0: 1.0, 11: 1.0}, {5: 1.0}):
        np.testing.assert_array_equal(again.run(seeds, cfg), op.run(seeds, cfg))
