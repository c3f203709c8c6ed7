"""FastRP node embeddings shaped like GDS 2.13's `gds.fastRP` (algorithm `FastRP.java`).

What is kept from GDS, so embedded and Neo4j vectors behave alike downstream:

* initial vectors are very sparse random projections (Achlioptas / Li et al.): each entry
  is `+v` or `-v` with probability 1/6 each and 0 otherwise (sparsity s = 3), with
  `v = deg^β · sqrt(3) / sqrt(dim)`, `deg` the relationship count (1 for isolated nodes)
  and `β` the normalisation strength;
* each node's random vector depends only on the seed and the node's own key (GDS seeds
  by original node id), so adding nodes does not reshuffle everybody else's vector;
* iteration i computes `Hᵢ = D⁻¹ W Hᵢ₋₁` with `H₀` the random vectors, `W` the weighted
  (or 0/1) adjacency and `D` the *relationship count* (GDS divides a weighted sum by the
  unweighted degree, floored at 1);
* the embedding is `Σᵢ wᵢ · Hᵢ / ‖Hᵢ‖` per row (rows of norm 0 are added unscaled, i.e. as
  zeros), plus `nodeSelfInfluence · H₀ / ‖H₀‖`; the propagated `Hᵢ` themselves stay
  unnormalised, as in GDS.

Not kept: GDS's own random generator, so the numbers differ from the server's.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from graph.algorithms.ppr import as_adjacency, relationship_counts
from graph.config import AlgorithmConfig

_SPARSITY = 3.0
_ENTRY_PROBABILITY = 1.0 / (2.0 * _SPARSITY)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Stateless 64-bit mixer: a counter-based generator that can be vectorised per node."""
    z = x.astype(np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _uniforms(seed: int, keys: np.ndarray, dim: int) -> np.ndarray:
    """U[0,1) of shape (len(keys), dim) that is a pure function of (seed, key, column)."""
    seed_mix = _splitmix64(np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
    node_mix = _splitmix64(keys.astype(np.int64).view(np.uint64) ^ seed_mix)
    bits = _splitmix64(node_mix[:, None] * _GOLDEN + np.arange(dim, dtype=np.uint64)[None, :])
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def random_vectors(
    degree: np.ndarray, dim: int, seed: int, normalization_strength: float, keys: np.ndarray
) -> np.ndarray:
    """The sparse ±v initial vectors (float64, n × dim)."""
    safe_degree = np.where(degree > 0, degree, 1).astype(np.float64)
    scale = safe_degree**normalization_strength * np.sqrt(_SPARSITY) / np.sqrt(dim)
    u = _uniforms(seed, keys, dim)
    signs = np.where(u < _ENTRY_PROBABILITY, 1.0, np.where(u < 2 * _ENTRY_PROBABILITY, -1.0, 0.0))
    return signs * scale[:, None]


def _add_row_normalised(into: np.ndarray, block: np.ndarray, weight: float) -> None:
    norms = np.linalg.norm(block, axis=1)
    inv = np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0.0)
    into += block * (weight * inv)[:, None]


def fastrp(
    adj: sparse.spmatrix | sparse.sparray | np.ndarray,
    cfg: AlgorithmConfig,
    *,
    seed: int | None = None,
    weighted: bool = True,
    node_keys: np.ndarray | None = None,
    node_self_influence: float = 0.0,
) -> np.ndarray:
    """FastRP embeddings, float32 of shape (n, cfg.fastrp_dimension).

    `seed` overrides `cfg.fastrp_seed`; `node_keys` (one int per node, default the row
    index) decide each node's random vector, so pass stable ids to keep vectors of
    unchanged nodes stable across graph versions. Isolated nodes get zero vectors unless
    `node_self_influence` is non-zero.
    """
    a = as_adjacency(adj)
    n, dim = a.shape[0], int(cfg.fastrp_dimension)
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    keys = np.arange(n, dtype=np.int64) if node_keys is None else np.asarray(node_keys, np.int64)
    if keys.shape != (n,):
        raise ValueError("node_keys needs one key per node")
    counts = relationship_counts(a)
    if not weighted:
        a = counts
    degree = np.asarray(counts.sum(axis=1)).ravel()  # GDS: relationship count, loops twice
    current = random_vectors(
        degree,
        dim,
        int(cfg.fastrp_seed if seed is None else seed),
        float(cfg.fastrp_normalization_strength),
        keys,
    )
    embedding = np.zeros((n, dim), dtype=np.float64)
    if node_self_influence != 0.0:
        _add_row_normalised(embedding, current, node_self_influence)
    inv_degree = 1.0 / np.maximum(degree, 1).astype(np.float64)
    for weight in cfg.fastrp_iteration_weights:
        current = (a @ current) * inv_degree[:, None]
        _add_row_normalised(embedding, current, float(weight))
    return embedding.astype(np.float32)
