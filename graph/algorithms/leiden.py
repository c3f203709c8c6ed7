"""Leiden communities on a weighted undirected graph (in-process stand-in for `gds.leiden`).

The partition comes from leidenalg (Traag's reference implementation) rather than a port
of GDS's Leiden: both optimise the same objective, the generalised modularity
`Q = Σ_c [ in_c / 2m − γ (tot_c / 2m)² ]`, which is also what GDS reports (its
`ModularityComputer` sums `in_c − γ'·tot_c²` with `γ' = γ/2m` and scales by `1/2m`).
The communities themselves can differ from GDS's (different random move order), so
callers compare modularity, not labels. Everything is seeded and single-threaded, so
repeated runs on the same matrix give identical labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from graph.algorithms.ppr import as_adjacency
from graph.config import AlgorithmConfig

if TYPE_CHECKING:
    import igraph as ig


def modularity(
    adj: sparse.spmatrix | sparse.sparray | np.ndarray, labels: np.ndarray, gamma: float = 1.0
) -> float:
    """Weighted modularity of `labels` with resolution `gamma`; 0.0 for a graph without
    edges. `adj` is symmetric; a diagonal entry counts once towards its node's degree."""
    a = as_adjacency(adj)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (a.shape[0],):
        raise ValueError("one label per node expected")
    two_m = float(a.sum())
    if two_m <= 0.0 or a.shape[0] == 0:
        return 0.0
    _, comm = np.unique(labels, return_inverse=True)
    coo = a.tocoo()
    inside = float(coo.data[comm[coo.row] == comm[coo.col]].sum())
    strength = np.asarray(a.sum(axis=1)).ravel()
    totals = np.bincount(comm, weights=strength)
    return inside / two_m - gamma * float(np.sum((totals / two_m) ** 2))


def _to_igraph(a: sparse.csr_matrix) -> ig.Graph:
    import igraph as ig  # with matplotlib, 0.35 s: only where communities are computed

    """Each unordered pair once; a diagonal entry becomes a loop of half its weight, because
    igraph counts a loop twice in a node's strength and the matrix counts it once."""
    upper = sparse.triu(a, k=0).tocoo()
    weights = np.where(upper.row == upper.col, upper.data / 2.0, upper.data)
    graph = ig.Graph(n=a.shape[0], edges=np.column_stack([upper.row, upper.col]).tolist())
    graph.es["weight"] = weights.tolist()
    return graph


def canonical_labels(membership: np.ndarray) -> np.ndarray:
    """Relabel 0..k-1 by community size (largest first), ties by smallest member index, so
    labels do not depend on the optimiser's internal numbering."""
    membership = np.asarray(membership, dtype=np.int64)
    if membership.size == 0:
        return membership
    ids, first, inverse, sizes = np.unique(
        membership, return_index=True, return_inverse=True, return_counts=True
    )
    order = np.lexsort((first, -sizes))  # primary: size desc, secondary: first occurrence
    rank = np.empty(ids.size, dtype=np.int64)
    rank[order] = np.arange(ids.size)
    return rank[inverse]


def leiden(
    adj: sparse.spmatrix | sparse.sparray | np.ndarray, cfg: AlgorithmConfig
) -> tuple[np.ndarray, float]:
    """Community label per node (0..k-1) and the partition's modularity at γ=cfg.leiden_gamma.

    Isolated nodes end up alone in their own community. `leiden_max_levels` caps the
    number of full Leiden passes (each pass moves, refines and aggregates until stable) and
    a pass improving modularity by no more than `leiden_tolerance` stops the run, mirroring
    GDS's `maxLevels` / `tolerance`.
    """
    a = as_adjacency(adj)
    n = a.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0.0
    if np.any(a.data < 0.0):
        raise ValueError("Leiden needs non-negative weights")
    total_weight = float(a.sum()) / 2.0
    if total_weight <= 0.0:
        return np.arange(n, dtype=np.int64), 0.0

    import leidenalg

    partition = leidenalg.RBConfigurationVertexPartition(
        _to_igraph(a), weights="weight", resolution_parameter=float(cfg.leiden_gamma)
    )
    optimiser = leidenalg.Optimiser()
    optimiser.set_rng_seed(int(cfg.leiden_seed))
    for _ in range(int(cfg.leiden_max_levels)):
        gain = optimiser.optimise_partition(partition, n_iterations=1)
        # RBConfiguration's quality is modularity times 2m (twice the total edge weight).
        if gain / (2.0 * total_weight) <= cfg.leiden_tolerance:
            break
    labels = canonical_labels(np.asarray(partition.membership))
    return labels, modularity(a, labels, float(cfg.leiden_gamma))
