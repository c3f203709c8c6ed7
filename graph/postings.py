"""One segment's term frequencies in the two orders BM25 needs, as plain arrays that may be
views of a memory-mapped file.

Queries read a few terms' postings (by column: CSC); folding segments and dropping a removed
document's rows read rows (CSR). Both are kept, with each row's length (the sum of its term
frequencies, BM25's document length), so a query process maps a segment and computes nothing
the size of the corpus: the pages it touches are shared with every other process that maps
the same file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

ARRAYS = (
    "csc_indptr",
    "csc_indices",
    "csc_data",
    "csr_indptr",
    "csr_indices",
    "csr_data",
    "lengths",
)


@dataclass(frozen=True, slots=True)
class Postings:
    """Rows are the segment's chunks (its own order), columns its vocabulary. Term
    frequencies are float32 (whole numbers, exact below 2^24); indices int32."""

    vocabulary: list[str]
    csc_indptr: np.ndarray
    csc_indices: np.ndarray
    csc_data: np.ndarray
    csr_indptr: np.ndarray
    csr_indices: np.ndarray
    csr_data: np.ndarray
    lengths: np.ndarray  # float64, one per row

    @property
    def rows(self) -> int:
        return len(self.csr_indptr) - 1

    @classmethod
    def from_matrix(cls, vocabulary: list[str], tf: sparse.spmatrix) -> Postings:
        """From a rows × vocabulary term-frequency matrix (duplicates summed, zeros
        dropped)."""
        csr = sparse.csr_matrix(tf, dtype=np.float64, copy=True)
        if csr.shape[1] != len(vocabulary):
            raise ValueError(f"{csr.shape[1]} columns for a vocabulary of {len(vocabulary)}")
        csr.sum_duplicates()
        csr.eliminate_zeros()
        if csr.nnz and csr.data.min() < 0:
            raise ValueError("term frequencies must be non-negative")
        csr.sort_indices()
        lengths = np.asarray(csr.sum(axis=1), dtype=np.float64).ravel()
        csc = csr.tocsc()
        csc.sort_indices()
        return cls(
            list(vocabulary),
            csc.indptr.astype(np.int64),
            csc.indices.astype(np.int32),
            csc.data.astype(np.float32),
            csr.indptr.astype(np.int64),
            csr.indices.astype(np.int32),
            csr.data.astype(np.float32),
            lengths,
        )

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAYS}

    @classmethod
    def from_arrays(cls, vocabulary: list[str], arrays: dict[str, np.ndarray]) -> Postings:
        """The postings `arrays()` gave, used as they are (views stay views)."""
        found = cls(vocabulary, *(arrays[name] for name in ARRAYS))
        if len(found.csc_indptr) != len(vocabulary) + 1 or len(found.lengths) != found.rows:
            raise ValueError("postings arrays do not match their vocabulary and rows")
        return found

    def df(self) -> np.ndarray:
        """Rows holding each term (int64)."""
        return np.diff(self.csc_indptr)

    def row_terms(self, rows: np.ndarray) -> np.ndarray:
        """The columns of the given rows' entries, concatenated (a term once per row)."""
        if not len(rows):
            return np.empty(0, dtype=np.int64)
        starts, ends = self.csr_indptr[rows], self.csr_indptr[rows + 1]
        return np.concatenate([self.csr_indices[s:e] for s, e in zip(starts, ends, strict=True)])

    def column(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, term frequencies) of one term's postings."""
        s, e = self.csc_indptr[col], self.csc_indptr[col + 1]
        return self.csc_indices[s:e], self.csc_data[s:e]

    def matrix(self) -> sparse.csr_matrix:
        """The rows as a CSR matrix of float64 term frequencies (folding, compaction)."""
        return sparse.csr_matrix(
            (
                np.asarray(self.csr_data, dtype=np.float64),
                np.asarray(self.csr_indices),
                np.asarray(self.csr_indptr),
            ),
            shape=(self.rows, len(self.vocabulary)),
        )
