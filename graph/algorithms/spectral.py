"""Spectral coordinates: the smallest non-trivial eigenvectors of the normalised Laplacian.

`L = I − D^-1/2 A D^-1/2` has eigenvalue 0 once per connected component, with eigenvector
`D^1/2 1` restricted to that component. Those carry no geometry, so they are deflated
explicitly — `L + 3·Σ_c u_c u_cᵀ` moves them to 3, above the rest of the spectrum (which
lies in [0, 2]) — instead of "skip the first eigenvector", which is wrong as soon as the
graph has more than one component. Isolated nodes have no Laplacian row worth keeping and
get zero coordinates.

Small graphs use dense `eigh` (exact, and faster than ARPACK below a few thousand nodes).
Larger ones use Lanczos (`eigsh`, which='SA') on the deflated operator with a fixed start
vector: shift-invert would need a sparse LU of L, whose fill-in explodes on the expander-like
graphs we build (kNN + co-occurrence), while the deflated operator costs one sparse mat-vec.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from scipy import sparse

from graph.algorithms.ppr import as_adjacency

DENSE_BELOW = 2000
_DEFLATE_TO = 3.0


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """ARPACK makes many tiny BLAS-2 calls; a multi-threaded OpenBLAS spends more time
    synchronising than computing on them (measured 10x slower at n=20k on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only a speed-up
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _fix_signs(vectors: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of each column positive. Entries within 1e-4
    (relative) of the largest count as tied and the first of them decides, so symmetric
    graphs (a path's two ends) do not flip sign on rounding noise."""
    if vectors.size == 0:
        return vectors
    magnitude = np.abs(vectors)
    near_max = magnitude >= magnitude.max(axis=0, keepdims=True) * (1.0 - 1e-4)
    pivots = np.argmax(near_max, axis=0)
    signs = np.sign(vectors[pivots, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs


def _trivial_basis(degree: np.ndarray, comp: np.ndarray, n_comp: int) -> np.ndarray:
    """Orthonormal null-space basis of L: one column `D^1/2 1_c / ‖·‖` per component."""
    sqrt_deg = np.sqrt(degree)
    basis = np.zeros((degree.size, n_comp))
    basis[np.arange(degree.size), comp] = sqrt_deg
    return basis / np.linalg.norm(basis, axis=0, keepdims=True)


# scipy.linalg, csgraph and ARPACK are imported where they are used: they load in 0.1 s,
# and a process that only answers questions imports this module without calling it.


def _smallest_dense(lap: sparse.csr_matrix, basis: np.ndarray, k: int) -> np.ndarray:
    from scipy import linalg

    dense = lap.toarray() + _DEFLATE_TO * (basis @ basis.T)
    # Only the k smallest pairs: bisection + inverse iteration beats a full decomposition.
    try:
        _, vecs = linalg.eigh(dense, subset_by_index=[0, k - 1], driver="evx")
    except linalg.LinAlgError:  # inverse iteration failed on a tight cluster: do it all
        _, vecs = np.linalg.eigh(dense)
        vecs = vecs[:, :k]
    return vecs


def _smallest_sparse(lap: sparse.csr_matrix, basis: np.ndarray, k: int) -> np.ndarray:
    from scipy.sparse.linalg import LinearOperator, eigsh

    m = lap.shape[0]
    deflated = LinearOperator(
        (m, m),
        matvec=lambda x: lap @ x + _DEFLATE_TO * (basis @ (basis.T @ x)),
        dtype=np.float64,
    )
    start = np.random.default_rng(0).standard_normal(m)
    with _single_threaded_blas():
        _, vecs = eigsh(
            deflated,
            k=k,
            which="SA",
            v0=start,
            ncv=min(m - 1, max(2 * k + 1, 64)),
            tol=1e-8,
            maxiter=50 * m,
        )
    return vecs


def spectral_coordinates(
    adj: sparse.spmatrix | sparse.sparray | np.ndarray, dim: int
) -> np.ndarray:
    """(n, dim) float32: column j is the (j+1)-th smallest non-trivial eigenvector of L,
    ordered by eigenvalue; columns beyond the available non-trivial eigenvectors are zero."""
    if dim < 0:
        raise ValueError("dim must be non-negative")
    a = as_adjacency(adj)
    if np.any(a.data < 0.0):
        raise ValueError("spectral coordinates need non-negative weights")
    a = ((a + a.T) * 0.5).tocsr()  # symmetric by contract; averaging makes L symmetric exactly
    n = a.shape[0]
    out = np.zeros((n, dim), dtype=np.float32)
    degree = np.asarray(a.sum(axis=1)).ravel()
    active = np.flatnonzero(degree > 0.0)
    if dim == 0 or active.size == 0:
        return out

    from scipy.sparse import csgraph

    sub = a[active][:, active]
    deg = degree[active]
    n_comp, comp = csgraph.connected_components(sub, directed=False)
    k = min(dim, active.size - n_comp)  # non-trivial eigenvectors that exist
    if k <= 0:
        return out
    inv_sqrt = sparse.diags(1.0 / np.sqrt(deg))
    lap = (sparse.identity(active.size, format="csr") - inv_sqrt @ sub @ inv_sqrt).tocsr()
    basis = _trivial_basis(deg, comp, n_comp)
    if active.size < DENSE_BELOW or k >= active.size - 1:
        vecs = _smallest_dense(lap, basis, k)
    else:
        vecs = _smallest_sparse(lap, basis, k)
        order = np.argsort(np.einsum("ij,ij->j", vecs, lap @ vecs), kind="stable")
        vecs = vecs[:, order]
    out[active, :k] = _fix_signs(vecs).astype(np.float32)
    return out
