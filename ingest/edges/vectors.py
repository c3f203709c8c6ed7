"""Exact, reproducible cosine scores for the kNN kinds (SEMANTIC over embeddings, UTILITY over
question TF-IDF vectors).

An incremental update must score a pair exactly as a fresh build does, but a float dot
product depends on summation order, which BLAS picks by matrix shape. So each unit vector is
quantised once to integers (`rint(u · 2^24)`, a pure function of the stored vector, its norm
summed with `math.fsum`), and products of those are integers below 2^53: float64 matrix
products then compute them exactly in any order, blocked or not, dense or sparse. A score is
that integer over 2^48 — within ~1e-6 of the float cosine, and bit-identical however it was
computed.

`exact_scores` is the one search primitive (rows of the space against all of it, in blocks);
an approximate index can replace it for candidate generation as long as candidates are
re-scored with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from scipy import sparse

from ingest.edges.model import Kth

SCALE = float(2**24)
_SQUARED = SCALE * SCALE
BLOCK = 1024


def unit_quantised(vector: np.ndarray) -> np.ndarray:
    """The vector scaled to unit length and rounded to integers on the 2^-24 grid."""
    v = np.asarray(vector, dtype=np.float64)
    norm = math.sqrt(math.fsum((v * v).tolist()))
    if norm == 0.0:
        return np.zeros_like(v)
    return np.rint(v / norm * SCALE)


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
        for start in range(0, len(positions), BLOCK):
            part = positions[start : start + BLOCK]
            scores = self.exact_scores(part)
            scores[np.arange(len(part)), part] = -np.inf
            yield part, scores

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        positions = np.fromiter((self.index[c] for c in ids), np.int64, len(ids))
        out: dict[str, dict[str, float]] = {}
        for part, scores in self._blocks(positions):
            for row, pos in enumerate(part):
                cols = np.flatnonzero(scores[row] >= self.floor)
                out[self.ids[pos]] = {self.ids[j]: float(scores[row, j]) for j in cols}
        return out

    def tops(self, k: int) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
        n = len(self.ids)
        if n == 0:
            return
        kk = min(k, n - 1)
        for part, scores in self._blocks(np.arange(n)):
            if kk > 0:
                kth_values = -np.partition(-scores, kk - 1, axis=1)[:, kk - 1]
            for row, pos in enumerate(part):
                line = scores[row]
                if kk == 0:
                    yield self.ids[pos], [], None
                    continue
                # Ids are sorted, so column order is id order: ties keep the smaller id.
                cols = np.flatnonzero(line >= max(kth_values[row], self.floor))
                cols = cols[np.lexsort((cols, -line[cols]))]
                above = int(np.count_nonzero(line >= self.floor))
                top = [(self.ids[j], float(line[j])) for j in cols[:k]]
                kth = (top[-1][1], top[-1][0]) if above >= k and top else None
                yield self.ids[pos], top, kth


def dense_space(ids: Sequence[str], vectors: Sequence[np.ndarray], floor: float) -> VectorSpace:
    if not ids:
        return VectorSpace([], np.zeros((0, 0)), floor)
    rows = np.stack([unit_quantised(v) for v in vectors])
    return VectorSpace(ids, rows, floor)


def sparse_space(
    ids: Sequence[str], weights: Sequence[dict[str, float]], floor: float
) -> VectorSpace:
    """Rows from {term: weight} maps (weights are scaled to unit length here)."""
    vocab: dict[str, int] = {}
    r, c, v = [], [], []
    for i, row in enumerate(weights):
        terms = sorted(row)
        norm = math.sqrt(math.fsum(row[t] * row[t] for t in terms))
        for t in terms:
            q = float(np.rint(row[t] / norm * SCALE)) if norm > 0 else 0.0
            if q != 0.0:
                r.append(i)
                c.append(vocab.setdefault(t, len(vocab)))
                v.append(q)
    matrix = sparse.csr_matrix((v, (r, c)), shape=(len(ids), max(len(vocab), 1)), dtype=np.float64)
    return VectorSpace(ids, matrix, floor)
