"""Undirected weighted graphs as symmetric CSR matrices: the input of every in-process
algorithm. Each stored edge (a, b, w) becomes A[a, b] = A[b, a] = w, which is what a GDS
UNDIRECTED projection traverses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import sparse

from graph.types import ChunkEdge


def csr_view(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]
) -> sparse.csr_matrix:
    """A CSR matrix over these canonical arrays as they are: scipy's constructor may copy
    its inputs (it did for slices here), and these may be views of a mapped file, which a
    copy would turn into private memory in every process."""
    matrix = sparse.csr_matrix(shape, dtype=data.dtype)
    matrix.data, matrix.indices, matrix.indptr = data, indices, indptr
    return matrix


def symmetric(n: int, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> sparse.csr_matrix:
    if len(a) == 0:
        return sparse.csr_matrix((n, n))
    w = np.asarray(w, dtype=np.float64)
    coo = sparse.coo_matrix((np.r_[w, w], (np.r_[a, b], np.r_[b, a])), shape=(n, n))
    return coo.tocsr()


def from_edges(index: Mapping[str, int], edges: Sequence[ChunkEdge]) -> sparse.csr_matrix:
    """Chunk edges over the nodes of `index` (chunk id → row)."""
    a = np.fromiter((index[e.src] for e in edges), np.int64, len(edges))
    b = np.fromiter((index[e.dst] for e in edges), np.int64, len(edges))
    w = np.fromiter((e.weight for e in edges), np.float64, len(edges))
    return symmetric(len(index), a, b, w)


def token_adjacency(texts: list[str], rows: Sequence[Mapping[str, Any]]) -> sparse.csr_matrix:
    """The undirected weighted adjacency of CO_OCCURS rows `{a, b, weight}` over `texts`."""
    index = {t: i for i, t in enumerate(texts)}
    a = np.fromiter((index[r["a"]] for r in rows), np.int64, len(rows))
    b = np.fromiter((index[r["b"]] for r in rows), np.int64, len(rows))
    w = np.fromiter((r["weight"] for r in rows), np.float64, len(rows))
    return symmetric(len(texts), a, b, w)
