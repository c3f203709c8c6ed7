"""Exact, reproducible cosine scores for the kNN kinds (SEMANTIC over embeddings, UTILITY over
question TF-IDF vectors).

An incremental update must score a pair exactly as a fresh build does, but a float dot
product depends on summation order, which BLAS picks by matrix shape. So each unit vector is
quantised once to integers (`rint(u · 2^24)`), and products of those are integers below
2^53: float64 matrix products then compute them exactly in any order, blocked or not, dense
or sparse. A score is that integer over 2^48 — within ~1e-6 of the float cosine, and
bit-identical however it was computed. The quantisation itself must be a pure function of
one vector, so its norm is summed by a fixed pairwise tree of element-wise additions
(`row_norms`), which no batch shape or SIMD path can reorder.

`exact_scores` is the one scoring primitive. Candidates come from a float32 scan of the
whole space (exact: every partner is found), or, for a dense space above
`Approximate.above` members, from the IVF-Flat index dense search uses
(`graph.dense.DenseIndex`): each row's `depth` nearest by that index, re-scored exactly. The
scan costs n² products, the index about n·(nprobe/nlist)·n with nlist ≈ 4√n, so on large
corpora the kNN kinds stop being quadratic. Above the threshold a full build's lists are
approximate (a partner the scanned cells miss is not found;
bench/out/findings/knn-edges.json measured the share found), while an incremental update,
which asks for few rows, scans those exactly (`INDEXED_SHARE`): its recomputed lists are
exact, the others stay as built, so it equals a fresh build up to the build's recall;
below the threshold both are exact.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from graph.config import SearchIndexConfig
from graph.dense import DenseIndex, unit_rows
from ingest.edges.model import Kth

SCALE = float(2**24)
_SQUARED = SCALE * SCALE
BLOCK_CELLS = 1 << 24  # scores held at once: 128 MB of float64
# Rows asked for at once, as a share of the space, from which the IVF index pays for its
# training; fewer rows (an incremental update's dirty chunks) are scanned exactly.
INDEXED_SHARE = 0.125


def row_norms(rows: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row, summed in the same fixed order whatever the matrix:
    columns padded with zeros to a power of two, then halves added element-wise."""
    squares = np.asarray(rows, dtype=np.float64) ** 2
    width = 1 << max(int(squares.shape[1]) - 1, 0).bit_length()
    if width != squares.shape[1]:
        squares = np.hstack([squares, np.zeros((squares.shape[0], width - squares.shape[1]))])
    while squares.shape[1] > 1:
        half = squares.shape[1] // 2
        squares = squares[:, :half] + squares[:, half:]
    return np.sqrt(squares[:, 0])


def embedding_units(embeddings: np.ndarray) -> np.ndarray:
    """SEMANTIC's quantised rows of chunk embeddings: the float32 unit rows the dense index
    holds for them (`graph.dense.unit_rows`), quantised. Quantising what the index holds,
    not the embedding itself, lets an update read a chunk's row from the mapped search
    files instead of the store and still score every pair as a fresh build does."""
    return unit_quantised(unit_rows(embeddings))


def unit_quantised(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length and rounded to integers on the 2^-24 grid (zero rows
    stay zero)."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = row_norms(rows)
    safe = np.where(norms > 0, norms, 1.0)
    return np.rint(rows / safe[:, None] * SCALE)


@dataclass(frozen=True, slots=True)
class Approximate:
    """Candidate search by an IVF index above `above` members: `nprobe` cells scanned,
    the `depth` nearest kept per row (at least the kind's k)."""

    above: int
    nprobe: int = 32
    depth: int = 64


class VectorSpace:
    """Members (sorted ids) with quantised unit vectors, dense or sparse rows; pairs scoring at
    least `floor` are partners.

    Dense rows are searched in float32 (`candidates`, BLAS speed) and every candidate is then
    re-scored exactly; float32 errs by less than `slack` on unit vectors (4× the worst-case
    bound d·2^-24 for dimension d), so candidates within the slack of the floor, or of a
    row's float32 kth score, include every exact partner, or every exact top-k member, and
    ties. Sparse rows are multiplied exactly (integer-valued float64 sparse products)."""

    def __init__(
        self,
        ids: Sequence[str],
        rows: np.ndarray | sparse.csr_matrix,
        floor: float,
        approximate: Approximate | None = None,
    ):
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        self.ids = [ids[i] for i in order]
        self.index = {c: i for i, c in enumerate(self.ids)}
        in_order = all(i == j for i, j in enumerate(order))
        self.rows = rows if in_order or not len(order) else rows[order]
        self.floor = floor
        self.dense = not sparse.issparse(self.rows)
        if self.dense:
            # Exact: |q| <= 2^24 fits a float32 significand, and 2^-24 only moves the exponent.
            self.approx = self.rows.astype(np.float32) * np.float32(1.0 / SCALE)
            self.slack = 4.0 * max(self.rows.shape[1], 1) * 2.0**-24 + 1e-6
        self.approximate = (
            approximate
            if approximate is not None and self.dense and len(self.ids) > approximate.above
            else None
        )

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.index

    def __len__(self) -> int:
        return len(self.ids)

    def _block_size(self) -> int:
        return max(1, BLOCK_CELLS // max(len(self.ids), 1))

    def exact_scores(self, position: int, cols: np.ndarray) -> np.ndarray:
        """Exact scores of one row against the given columns."""
        if self.dense:
            return (self.rows[cols] @ self.rows[position]) / _SQUARED
        return (self.rows[cols] @ self.rows[position].T).toarray().ravel() / _SQUARED

    def candidates(
        self, positions: np.ndarray, k: int | None = None
    ) -> Iterator[tuple[int, np.ndarray]]:
        """Per row, the columns that may score at least the floor (and, with k, that may be
        among the row's top k) by the float32 search. Dense rows only."""
        if self.approximate is not None and len(positions) >= INDEXED_SHARE * len(self.ids):
            yield from self._indexed_candidates(positions, k)
            return
        n = len(self.ids)
        for start in range(0, len(positions), self._block_size()):
            part = positions[start : start + self._block_size()]
            approx = self.approx[part] @ self.approx.T
            approx[np.arange(len(part)), part] = -np.inf
            lower = np.full(len(part), self.floor - self.slack)
            if k is not None and 0 < k < n - 1:
                kth = -np.partition(-approx, k - 1, axis=1)[:, k - 1]
                lower = np.maximum(lower, kth - 2.0 * self.slack)
            for row, pos in enumerate(part):
                yield int(pos), np.flatnonzero(approx[row] >= lower[row])

    @cached_property
    def _index(self) -> DenseIndex:
        assert self.approximate is not None
        config = SearchIndexConfig(approximate_above=0, ivf_nprobe=self.approximate.nprobe)
        return DenseIndex.build([f"{i:010d}" for i in range(len(self.ids))], self.approx, config)

    def _indexed_candidates(
        self, positions: np.ndarray, k: int | None
    ) -> Iterator[tuple[int, np.ndarray]]:
        assert self.approximate is not None
        depth = max(self.approximate.depth, (k or 0) + 1)
        lower = self.floor - self.slack
        index = self._index
        for start in range(0, len(positions), 4096):
            part = positions[start : start + 4096]
            hits = index.search_many(self.approx[part], depth + 1)
            for pos, row in zip(part, hits, strict=True):
                cols = [int(c) for c, s in row if s >= lower and int(c) != pos]
                yield int(pos), np.asarray(sorted(cols), dtype=np.int64)

    def _rows_above_floor(
        self, positions: np.ndarray, k: int | None = None
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray, bool]]:
        """(position, columns, exact scores, whether there are at least k partners) per row:
        the members scoring at least the floor, in column (= id) order — all of them, or
        with k a superset of the top k. Sparse rows with a positive floor never densify:
        only pairs sharing a term can reach it."""
        if self.dense:
            for pos, cols in self.candidates(positions, k):
                scores = self.exact_scores(pos, cols)
                keep = scores >= self.floor
                # With k, fewer than k exact partners among the candidates means the
                # candidates held every partner (the floor bound was the lower one).
                yield pos, cols[keep], scores[keep], int(keep.sum()) >= (k or 0)
            return
        if self.floor > 0:
            for start in range(0, len(positions), self._block_size()):
                part = positions[start : start + self._block_size()]
                product = (self.rows[part] @ self.rows.T).tocsr()
                for row, pos in enumerate(part):
                    lo, hi = product.indptr[row], product.indptr[row + 1]
                    cols = product.indices[lo:hi]
                    scores = product.data[lo:hi] / _SQUARED
                    keep = np.flatnonzero((scores >= self.floor) & (cols != pos))
                    keep = keep[np.argsort(cols[keep], kind="stable")]
                    yield int(pos), cols[keep], scores[keep], len(keep) >= (k or 0)
            return
        for pos in positions:
            cols = np.flatnonzero(np.arange(len(self.ids)) != pos)
            scores = self.exact_scores(int(pos), cols)
            keep = scores >= self.floor
            yield int(pos), cols[keep], scores[keep], int(keep.sum()) >= (k or 0)

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        positions = np.fromiter((self.index[c] for c in ids), np.int64, len(ids))
        return {
            self.ids[pos]: {self.ids[j]: float(v) for j, v in zip(cols, scores, strict=True)}
            for pos, cols, scores, _ in self._rows_above_floor(positions)
        }

    def tops(self, k: int) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
        """Each member's first k partners by (−score, id) and its kth key."""
        for pos, cols, scores, full in self._rows_above_floor(np.arange(len(self.ids)), k):
            order = np.lexsort((cols, -scores))[:k]
            top = [(self.ids[j], float(scores[i])) for i, j in zip(order, cols[order], strict=True)]
            kth = (top[-1][1], top[-1][0]) if full and len(top) == k else None
            yield self.ids[pos], top, kth


def dense_space(
    ids: Sequence[str],
    vectors: Sequence[np.ndarray],
    floor: float,
    approximate: Approximate | None = None,
) -> VectorSpace:
    if not ids:
        return VectorSpace([], np.zeros((0, 0)), floor)
    return VectorSpace(ids, embedding_units(np.stack(vectors)), floor, approximate)


def sparse_space(
    ids: Sequence[str],
    lengths: np.ndarray,
    columns: np.ndarray,
    weights: np.ndarray,
    floor: float,
) -> VectorSpace:
    """Rows given flat: row i is the next `lengths[i]` entries of `columns` (term numbers,
    in the row's sorted-term order) and `weights`; scaled to unit length here. A row's
    weights are laid out left-aligned in a zero-padded matrix, so `row_norms` sums each row
    in the same order as it would alone."""
    width = int(lengths.max()) if len(lengths) else 0
    padded = np.zeros((len(ids), max(width, 1)))
    filled = np.arange(padded.shape[1])[None, :] < lengths[:, None]
    padded[filled] = weights  # row-major: each row's entries in order
    values = unit_quantised(padded)[filled]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    n_columns = int(columns.max()) + 1 if len(columns) else 1
    matrix = sparse.csr_matrix((values, columns, indptr), shape=(len(ids), n_columns))
    matrix.eliminate_zeros()
    return VectorSpace(ids, matrix, floor)
