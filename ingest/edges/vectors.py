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

`exact_scores` is the one search primitive (rows of the space against all of it, in blocks);
an approximate index can replace it for candidate generation as long as candidates are
re-scored with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from scipy import sparse

from ingest.edges.model import Kth

SCALE = float(2**24)
_SQUARED = SCALE * SCALE
BLOCK_CELLS = 1 << 24  # scores held at once: 128 MB of float64


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


def unit_quantised(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length and rounded to integers on the 2^-24 grid (zero rows
    stay zero)."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = row_norms(rows)
    safe = np.where(norms > 0, norms, 1.0)
    return np.rint(rows / safe[:, None] * SCALE)


class VectorSpace:
    """Members (sorted ids) with quantised unit vectors, dense or sparse rows; pairs scoring at
    least `floor` are partners."""

    def __init__(self, ids: Sequence[str], rows: np.ndarray | sparse.csr_matrix, floor: float):
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        self.ids = [ids[i] for i in order]
        self.index = {c: i for i, c in enumerate(self.ids)}
        self.rows = rows[order] if len(order) else rows
        self.floor = floor

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.index

    def __len__(self) -> int:
        return len(self.ids)

    def exact_scores(self, positions: np.ndarray) -> np.ndarray:
        """Scores of the given rows against every member, (len(positions), n) float64."""
        block = self.rows[positions] @ self.rows.T
        if sparse.issparse(block):
            block = block.toarray()
        return np.asarray(block, dtype=np.float64) / _SQUARED

    def _blocks(self, positions: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        block = max(1, BLOCK_CELLS // max(len(self.ids), 1))
        for start in range(0, len(positions), block):
            part = positions[start : start + block]
            scores = self.exact_scores(part)
            scores[np.arange(len(part)), part] = -np.inf
            yield part, scores

    def _rows_above_floor(
        self, positions: np.ndarray
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(position, partner columns, scores) per row: every member scoring at least the
        floor, in column (= id) order. Sparse rows with a positive floor never densify:
        only pairs sharing a term can reach it."""
        if sparse.issparse(self.rows) and self.floor > 0:
            block = max(1, BLOCK_CELLS // max(len(self.ids), 1))
            for start in range(0, len(positions), block):
                part = positions[start : start + block]
                product = (self.rows[part] @ self.rows.T).tocsr()
                product.sort_indices()
                for row, pos in enumerate(part):
                    lo, hi = product.indptr[row], product.indptr[row + 1]
                    cols = product.indices[lo:hi]
                    scores = product.data[lo:hi] / _SQUARED
                    keep = (scores >= self.floor) & (cols != pos)
                    yield int(pos), cols[keep], scores[keep]
            return
        for part, scores in self._blocks(positions):
            for row, pos in enumerate(part):
                cols = np.flatnonzero(scores[row] >= self.floor)
                yield int(pos), cols, scores[row, cols]

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        positions = np.fromiter((self.index[c] for c in ids), np.int64, len(ids))
        return {
            self.ids[pos]: {self.ids[j]: float(v) for j, v in zip(cols, scores, strict=True)}
            for pos, cols, scores in self._rows_above_floor(positions)
        }

    def tops(self, k: int) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
        """Each member's first k partners by (−score, id) and its kth key."""
        for pos, cols, scores in self._rows_above_floor(np.arange(len(self.ids))):
            count = len(cols)
            if count > k:
                best = np.argpartition(-scores, k - 1)[:k]
                cut = scores[best].min()
                keep = np.flatnonzero(scores >= cut)  # ties at the cut: decided by id below
                cols, scores = cols[keep], scores[keep]
            order = np.lexsort((cols, -scores))[:k]
            top = [(self.ids[j], float(scores[i])) for i, j in zip(order, cols[order], strict=True)]
            kth = (top[-1][1], top[-1][0]) if count >= k and top else None
            yield self.ids[pos], top, kth


def dense_space(ids: Sequence[str], vectors: Sequence[np.ndarray], floor: float) -> VectorSpace:
    if not ids:
        return VectorSpace([], np.zeros((0, 0)), floor)
    return VectorSpace(ids, unit_quantised(np.stack(vectors)), floor)


def sparse_space(
    ids: Sequence[str], rows: Sequence[tuple[list[str], np.ndarray]], floor: float
) -> VectorSpace:
    """Rows given as (terms in sorted order, their weights); scaled to unit length here. A
    row's weights are laid out left-aligned in a zero-padded matrix, so `row_norms` sums
    each row in the same order as it would alone."""
    lengths = np.fromiter((len(terms) for terms, _ in rows), np.int64, len(rows))
    width = int(lengths.max()) if len(rows) else 0
    padded = np.zeros((len(rows), max(width, 1)))
    for i, (_, weights) in enumerate(rows):
        padded[i, : len(weights)] = weights
    filled = np.arange(padded.shape[1])[None, :] < lengths[:, None]
    values = unit_quantised(padded)[filled]  # row-major: the rows' terms in order
    terms = [t for row_terms, _ in rows for t in row_terms]
    vocab = {t: i for i, t in enumerate(dict.fromkeys(terms))}
    cols = np.fromiter((vocab[t] for t in terms), np.int64, len(terms))
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    matrix = sparse.csr_matrix((values, cols, indptr), shape=(len(ids), max(len(vocab), 1)))
    matrix.eliminate_zeros()
    return VectorSpace(ids, matrix, floor)
