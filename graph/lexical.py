"""BM25 (Okapi) as a precomputed sparse chunk × term weight matrix.

Why a matrix: TIGRAG scores a candidate chunk by ρ(c) = Σ_v p̂(v)·BM25(v, c) over the
PPR-expanded tokens v, and SpectRAG/LiteRAG need plain BM25 for seeding. Both are sums of
per-(chunk, term) contributions that do not depend on the query, so they are computed once
at index time; a query is then a gather over a few columns and a scatter-add into the
chunk vector, which costs microseconds instead of a pass over the corpus.

The scores are exactly those of `rank_bm25.BM25Okapi` on the same tokenised corpus (the
reference the project checks against): idf = log((N − n + 0.5) / (n + 0.5)), negative
idfs replaced by ε × the mean idf over the vocabulary, document length = number of tokens
(the row sum of term frequencies), unknown query terms contribute nothing and repeated
query terms count once per occurrence.

Every weight depends on corpus-wide N and average length, so a one-document change moves
all of them. What is kept on disk is therefore the raw term frequencies (rows that never
change once written, see ingest/index_files.py); `merge_terms` folds such rows into the
canonical matrix a fresh build would read from the store (rows by chunk id, vocabulary
sorted, unused terms dropped), and `build` weights it once per load, so queries pay nothing
for the updates and the scores are those of a fresh build, bit for bit.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from graph.types import TermMatrix

# Above this many stored entries in the selected columns, slice with scipy instead of the
# numpy gather (crossover measured at ≈7k entries on 2wiki: 6k chunks × 36k terms).
_GATHER_MAX_ENTRIES = 6_000


@dataclass(frozen=True, slots=True)
class Bm25Params:
    """BM25Okapi parameters; the defaults are rank-bm25's so scores match it out of the box."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


class LexicalIndex:
    """BM25 term weights W[c, v] for every chunk c and vocabulary term v.

    Rows follow `chunk_ids`, columns follow `vocabulary`. `weights` is the CSR matrix
    (chunk-major, for inspection and row access); queries use a CSC copy because they
    touch a handful of columns.
    """

    __slots__ = (
        "_csc",
        "_rows",
        "_term_index",
        "chunk_ids",
        "idf",
        "params",
        "vocabulary",
        "weights",
    )

    def __init__(
        self,
        chunk_ids: list[str],
        vocabulary: list[str],
        weights: sparse.csr_matrix,
        idf: np.ndarray,
        params: Bm25Params,
    ) -> None:
        if weights.shape != (len(chunk_ids), len(vocabulary)):
            raise ValueError(
                f"weights shape {weights.shape} does not match "
                f"{len(chunk_ids)} chunks × {len(vocabulary)} terms"
            )
        if idf.shape != (len(vocabulary),):
            raise ValueError("idf must have one entry per vocabulary term")
        self.chunk_ids = chunk_ids
        self.vocabulary = vocabulary
        self.weights = weights
        self.idf = idf
        self.params = params
        self._term_index = {term: i for i, term in enumerate(vocabulary)}
        csc = weights.tocsc()
        csc.sort_indices()
        self._csc = csc
        self._rows: dict[str, int] | None = None

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def build(cls, terms: TermMatrix, params: Bm25Params | None = None) -> LexicalIndex:
        """Precompute every BM25 contribution from chunk × term frequencies."""
        params = params or Bm25Params()
        n_chunks, n_terms = len(terms.chunk_ids), len(terms.vocabulary)
        tf = sparse.csr_matrix(terms.tf, dtype=np.float64, copy=True)
        if tf.shape != (n_chunks, n_terms):
            raise ValueError(
                f"tf shape {tf.shape} does not match {n_chunks} chunks × {n_terms} terms"
            )
        tf.sum_duplicates()
        tf.eliminate_zeros()
        if tf.nnz and tf.data.min() < 0:
            raise ValueError("term frequencies must be non-negative")

        doc_len = np.asarray(tf.sum(axis=1)).ravel()
        df = np.bincount(tf.indices, minlength=n_terms)
        idf = _okapi_idf(df, n_chunks, params.epsilon)

        weights = tf.copy()
        if tf.nnz:
            avgdl = float(doc_len.mean())
            rows = np.repeat(np.arange(n_chunks), np.diff(tf.indptr))
            length_norm = params.k1 * (1.0 - params.b + params.b * doc_len / avgdl)
            f = tf.data
            weights.data = idf[tf.indices] * (f * (params.k1 + 1.0) / (f + length_norm[rows]))
        return cls(list(terms.chunk_ids), list(terms.vocabulary), weights, idf, params)

    # ---- queries -----------------------------------------------------------------------
    @property
    def rows(self) -> dict[str, int]:
        """Chunk id → its row (built on first use)."""
        if self._rows is None:
            self._rows = {c: i for i, c in enumerate(self.chunk_ids)}
        return self._rows

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def term_ids(self, tokens: Iterable[str]) -> list[int]:
        """Column ids of the tokens that are in the vocabulary, in order, repeats kept."""
        index = self._term_index
        return [index[t] for t in tokens if t in index]

    def postings(self, term_id: int) -> np.ndarray:
        """Rows (chunk positions) of the chunks holding a term."""
        start, end = self._csc.indptr[term_id], self._csc.indptr[term_id + 1]
        return self._csc.indices[start:end]

    def document_frequency(self, term_id: int) -> int:
        return int(self._csc.indptr[term_id + 1] - self._csc.indptr[term_id])

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every chunk for a tokenised query (rank-bm25 `get_scores`)."""
        return self.weighted_scores(Counter(query_tokens))

    def weighted_scores(self, token_weights: Mapping[str, float]) -> np.ndarray:
        """Σ_v w(v)·W[c, v] for every chunk c; tokens outside the vocabulary are ignored."""
        return self._accumulate(token_weights)[0]

    def weighted_presence(self, token_weights: Mapping[str, float]) -> np.ndarray:
        """Σ_v w(v)·[v ∈ c]: the no-BM25 ablation of `weighted_scores`."""
        index = self._term_index
        pairs = [(index[t], w) for t, w in token_weights.items() if t in index and w]
        if not pairs:
            return np.zeros(len(self.chunk_ids), dtype=np.float64)
        cols, col_w = zip(*pairs, strict=True)
        sub = self._csc[:, list(cols)]
        return np.asarray((sub > 0).astype(np.float64) @ np.asarray(col_w), dtype=np.float64)

    def top_k(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The k best chunks containing at least one query term, best first.

        Chunks sharing no term with the query are left out rather than padded with
        arbitrary zero-score chunks; ties keep chunk order so results are reproducible.
        """
        scores, touched = self._accumulate(Counter(query_tokens), with_rows=True)
        if k <= 0 or touched.size == 0:
            return []
        if touched.size > k:
            # Partition on score only, then widen to every chunk tied with the k-th score so
            # the final sort can break ties by chunk order.
            kth = np.partition(scores[touched], touched.size - k)[touched.size - k]
            touched = touched[scores[touched] >= kth]
        order = np.lexsort((touched, -scores[touched]))[:k]
        return [(self.chunk_ids[i], float(scores[i])) for i in touched[order]]

    def _accumulate(
        self, token_weights: Mapping[str, float], with_rows: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Σ_v w(v)·W[:, v] over the known tokens; with_rows also returns the chunks any
        selected column touched (sorted), which `top_k` uses as its candidate set."""
        n_chunks = len(self.chunk_ids)
        index = self._term_index
        cols_list: list[int] = []
        weights_list: list[float] = []
        for token, weight in token_weights.items():
            col = index.get(token)
            if col is not None and weight:
                cols_list.append(col)
                weights_list.append(weight)
        no_rows = np.empty(0, dtype=np.int64)
        if not cols_list:
            return np.zeros(n_chunks, dtype=np.float64), no_rows
        cols = np.asarray(cols_list, dtype=np.int64)
        col_w = np.asarray(weights_list, dtype=np.float64)
        indptr, indices, data = self._csc.indptr, self._csc.indices, self._csc.data
        starts = indptr[cols].astype(np.int64)
        lengths = indptr[cols + 1] - starts
        total = int(lengths.sum())
        if total > _GATHER_MAX_ENTRIES:
            # Frequent terms: scipy's compiled column slice + mat-vec wins (measured ≈3× at
            # 50k entries); the numpy gather below wins for the usual few rare terms.
            sub = self._csc[:, cols]
            out = np.asarray(sub @ col_w, dtype=np.float64)
            rows = sub.indices
        else:
            # Positions of every stored entry of the selected columns, without a Python loop.
            positions = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
            positions += np.arange(total)
            rows = indices[positions]
            out = np.bincount(
                rows, weights=data[positions] * np.repeat(col_w, lengths), minlength=n_chunks
            )
        if not with_rows:
            return out, no_rows
        mask = np.zeros(n_chunks, dtype=bool)
        mask[rows] = True
        return out, np.flatnonzero(mask)


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25's idf: negative values floored to ε × mean idf (mean over terms that occur,
    taken before flooring); terms that occur nowhere get 0."""
    idf = np.zeros(df.shape[0], dtype=np.float64)
    present = df > 0
    if not present.any():
        return idf
    n = df[present].astype(np.float64)
    raw = np.log(n_docs - n + 0.5) - np.log(n + 0.5)
    floor = epsilon * float(raw.mean())
    idf[present] = np.where(raw < 0, floor, raw)
    return idf


def select_rows(terms: TermMatrix, keep: np.ndarray) -> TermMatrix:
    """The rows of `terms` where `keep` is true (vocabulary unchanged)."""
    keep = np.asarray(keep, dtype=bool)
    if keep.shape != (len(terms.chunk_ids),):
        raise ValueError("keep needs one flag per row")
    if keep.all():
        return terms
    ids = [c for c, k in zip(terms.chunk_ids, keep.tolist(), strict=True) if k]
    return TermMatrix(ids, terms.vocabulary, sparse.csr_matrix(terms.tf)[keep])


def merge_terms(parts: Sequence[TermMatrix]) -> TermMatrix:
    """Stack the rows of term matrices that each carry their own vocabulary into the
    canonical form: rows sorted by chunk id, vocabulary sorted, only terms some row uses,
    column indices sorted, float64 counts. Chunk ids must be unique across the parts.

    When every part is already canonical (what segments hold) and the first is the big
    one (a base), only the other parts' few rows and terms are placed by bisection and
    the base's rows are copied as contiguous runs: the cost is a pass over the entries,
    not a sort of the rows and vocabulary."""
    tfs = [sparse.csr_matrix(p.tf, dtype=np.float64) for p in parts]
    for part, tf in zip(parts, tfs, strict=True):
        if tf.shape != (len(part.chunk_ids), len(part.vocabulary)):
            raise ValueError(f"tf shape {tf.shape} does not match its ids and vocabulary")
    if not parts or not all(_canonical(p, tf) for p, tf in zip(parts, tfs, strict=True)):
        return _merge_general(parts)
    base, base_tf = parts[0], tfs[0]
    vocab, ids = base.vocabulary, base.chunk_ids
    # Terms the other parts bring: union column of each, and where new ones go.
    other_terms = sorted({t for p in parts[1:] for t in p.vocabulary})
    new_terms = [t for t in other_terms if not _in_sorted(vocab, t)]
    inserts = [bisect_left(vocab, t) for t in new_terms]
    base_cols = np.arange(len(vocab), dtype=np.int64)
    if new_terms:
        base_cols += np.searchsorted(np.asarray(inserts), base_cols, side="right")

    def union_col(term: str) -> int:
        i = bisect_left(vocab, term)
        if i < len(vocab) and vocab[i] == term:
            return int(base_cols[i])
        k = bisect_left(new_terms, term)
        return inserts[k] + k

    # The other parts' rows, sorted by id, with union columns.
    extra_ids = [c for p in parts[1:] for c in p.chunk_ids]
    if len(set(extra_ids)) != len(extra_ids) or any(_in_sorted(ids, c) for c in extra_ids):
        raise ValueError("a chunk id occurs in more than one row")
    remapped = [
        sparse.csr_matrix(
            (
                tf.data,
                np.asarray([union_col(t) for t in p.vocabulary], dtype=np.int64)[tf.indices],
                tf.indptr,
            ),
            shape=(tf.shape[0], len(vocab) + len(new_terms)),
        )
        for p, tf in zip(parts[1:], tfs[1:], strict=True)
    ]
    order = sorted(range(len(extra_ids)), key=extra_ids.__getitem__)
    extra = sparse.vstack(remapped, format="csr")[order] if extra_ids else sparse.csr_matrix((0, 0))
    extra_ids = [extra_ids[i] for i in order]
    # Interleave: runs of base rows between the insertion points of the extra rows.
    indices_parts, data_parts, lengths_parts, out_ids = [], [], [], []
    base_idx = base_cols[base_tf.indices] if new_terms else base_tf.indices
    base_len = np.diff(base_tf.indptr)
    start = 0
    cuts = [bisect_left(ids, c) for c in extra_ids] + [len(ids)]
    for k, cut in enumerate(cuts):
        lo, hi = base_tf.indptr[start], base_tf.indptr[cut]
        indices_parts.append(base_idx[lo:hi])
        data_parts.append(base_tf.data[lo:hi])
        lengths_parts.append(base_len[start:cut])
        out_ids += ids[start:cut]
        start = cut
        if k < len(extra_ids):
            a, b = extra.indptr[k], extra.indptr[k + 1]
            indices_parts.append(extra.indices[a:b])
            data_parts.append(extra.data[a:b])
            lengths_parts.append(np.asarray([b - a]))
            out_ids.append(extra_ids[k])
    indices = np.concatenate(indices_parts).astype(np.int64, copy=False)
    data = np.concatenate(data_parts)
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(lengths_parts))])
    columns = list(vocab)
    for k in reversed(range(len(new_terms))):
        columns.insert(inserts[k], new_terms[k])
    # Terms no surviving row uses leave the vocabulary.
    used = np.bincount(indices, minlength=len(columns)) > 0
    if not used.all():
        shift = np.cumsum(used) - 1
        indices = shift[indices]
        unused = np.flatnonzero(~used)
        if len(unused) * 8 < len(columns):
            for j in reversed(unused.tolist()):
                del columns[j]
        else:
            columns = [t for t, u in zip(columns, used.tolist(), strict=True) if u]
    tf = sparse.csr_matrix((data, indices, indptr), shape=(len(out_ids), len(columns)))
    return TermMatrix(out_ids, columns, tf)


def _canonical(part: TermMatrix, tf: sparse.csr_matrix) -> bool:
    """Rows sorted by id, vocabulary sorted, indices sorted and duplicate-free: the form
    merge_terms returns (checks are C-level passes, no per-item Python)."""
    return (
        tf.has_canonical_format
        and part.chunk_ids == sorted(part.chunk_ids)
        and part.vocabulary == sorted(part.vocabulary)
        and len(set(part.vocabulary)) == len(part.vocabulary)
        and (tf.nnz == 0 or tf.data.min() > 0)
    )


def _in_sorted(items: list[str], item: str) -> bool:
    i = bisect_left(items, item)
    return i < len(items) and items[i] == item


def _merge_general(parts: Sequence[TermMatrix]) -> TermMatrix:
    """`merge_terms` for any input: one remap and sort of everything."""
    # The first part (a base, in an update) keeps its column numbers, so only the few new
    # terms of the others cost a dictionary insert.
    first = parts[0].vocabulary if parts else []
    column: dict[str, int] = {t: j for j, t in enumerate(first)}
    if len(column) != len(first):
        raise ValueError("a vocabulary lists a term twice")
    blocks = []
    for i, part in enumerate(parts):
        tf = sparse.csr_matrix(part.tf, dtype=np.float64)
        if tf.shape != (len(part.chunk_ids), len(part.vocabulary)):
            raise ValueError(f"tf shape {tf.shape} does not match its ids and vocabulary")
        remap = (
            np.arange(len(part.vocabulary), dtype=np.int64)
            if i == 0
            else np.fromiter(
                (column.setdefault(t, len(column)) for t in part.vocabulary),
                dtype=np.int64,
                count=len(part.vocabulary),
            )
        )
        blocks.append((tf, remap))
    width = len(column)
    stacked = [
        sparse.csr_matrix((tf.data, remap[tf.indices], tf.indptr), shape=(tf.shape[0], width))
        for tf, remap in blocks
    ]
    ids = [c for part in parts for c in part.chunk_ids]
    if len(set(ids)) != len(ids):
        raise ValueError("a chunk id occurs in more than one row")
    tf = (
        sparse.vstack(stacked, format="csr")
        if stacked
        else sparse.csr_matrix((0, 0), dtype=np.float64)
    )
    tf.sum_duplicates()
    tf.eliminate_zeros()
    row_order = sorted(range(len(ids)), key=ids.__getitem__)
    vocabulary = list(column)
    used = np.bincount(tf.indices, minlength=width) > 0
    col_order = sorted(np.flatnonzero(used).tolist(), key=vocabulary.__getitem__)
    if not ids:
        tf = sparse.csr_matrix((0, len(col_order)), dtype=np.float64)
    else:  # each permutation is a pass over the entries: skipped when it is the identity
        if row_order != list(range(len(ids))):
            tf = tf[row_order]
        if col_order != list(range(width)):
            tf = tf[:, col_order]
    tf = sparse.csr_matrix(tf, dtype=np.float64)
    tf.sort_indices()
    return TermMatrix([ids[i] for i in row_order], [vocabulary[j] for j in col_order], tf)
