"""BM25 (Okapi) over term-frequency postings, weighted per query term.

Why postings and not a weight matrix: TIGRAG scores a candidate chunk by ρ(c) = Σ_v
p̂(v)·BM25(v, c) over the PPR-expanded tokens v, and SpectRAG/LiteRAG need plain BM25 for
seeding. A query touches a few terms; each term's contribution to the chunks holding it is a
gather over that term's postings and a handful of vector operations, microseconds to a
millisecond. Nothing the size of the corpus is computed when an index opens, so a query
process maps the search files (graph/postings.py) and answers: at 200k chunks that is the
difference between holding a gigabyte of weights per process and sharing mapped pages.

The scores are exactly those of `rank_bm25.BM25Okapi` on the same tokenised corpus (the
reference the project checks against): idf = log((N − n + 0.5) / (n + 0.5)), negative
idfs replaced by ε × the mean idf over the vocabulary, document length = number of tokens
(the row sum of term frequencies), unknown query terms contribute nothing and repeated
query terms count once per occurrence.

An index is one or more parts (a base segment and the deltas after it, ingest/index_files.py),
each with the position of its rows in the canonical row order (chunk ids sorted; a dropped
row has none). N, the average length and every term's document frequency are those of the
live rows, so an index folded from parts scores bit for bit as a fresh build over the same
chunks, and ranks ties alike (by canonical row).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import sparse

from graph.postings import Postings
from graph.topk import top_stable
from graph.types import TermMatrix


def _never(chunk_id: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class WeightedTop:
    """The best chunks by a weighted lexical score (TIGRAG's ρ), best first, with what the
    pool cut needs of the rest: how many chunks score above zero and their total.
    `scored(chunk_id)` says whether a chunk scores above zero at all."""

    ids: list[str]
    scores: np.ndarray
    candidates: int
    total: float
    scored: Callable[[str], bool] = field(default=_never)

    @classmethod
    def empty(cls) -> WeightedTop:
        return cls([], np.zeros(0), 0, 0.0)


@dataclass(frozen=True, slots=True)
class Bm25Params:
    """BM25Okapi parameters; the defaults are rank-bm25's so scores match it out of the box."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


class LexicalIndex:
    """BM25 of every chunk for any query, from the parts' postings.

    `chunk_ids` are the rows, in canonical order; term ids number the parts' vocabularies
    (the first part's, then terms the others add). `vocabulary` lists the terms some row
    holds, sorted, as a fresh build's would.
    """

    def __init__(
        self,
        parts: Sequence[tuple[Postings, np.ndarray]],
        chunk_ids: list[str],
        params: Bm25Params | None = None,
    ) -> None:
        """`parts`: each part's postings and, per part row, its position in `chunk_ids`
        (-1: the row was dropped). Every position is taken by exactly one live row."""
        self.params = params or Bm25Params()
        self.chunk_ids = chunk_ids
        n = len(chunk_ids)
        first = parts[0][0].vocabulary if parts else []
        index: dict[str, int] = {t: i for i, t in enumerate(first)}
        if len(index) != len(first):
            raise ValueError("a vocabulary lists a term twice")
        terms = list(first)
        to_global: list[np.ndarray] = []
        for k, (part, _) in enumerate(parts):
            if k == 0:
                to_global.append(np.arange(len(first), dtype=np.int64))
                continue
            ids = np.empty(len(part.vocabulary), dtype=np.int64)
            for j, term in enumerate(part.vocabulary):
                g = index.get(term)
                if g is None:
                    g = index[term] = len(terms)
                    terms.append(term)
                ids[j] = g
            to_global.append(ids)
        df = np.zeros(len(terms), dtype=np.int64)
        lengths = np.zeros(n, dtype=np.float64)
        filled = 0
        for (part, positions), ids in zip(parts, to_global, strict=True):
            if len(positions) != part.rows:
                raise ValueError(f"{len(positions)} positions for a part of {part.rows} rows")
            live = positions >= 0
            part_df = part.df()
            dead = np.flatnonzero(~live)
            if len(dead):
                gone = np.bincount(part.row_terms(dead), minlength=len(part.vocabulary))
                part_df = part_df - gone
            df[ids] += part_df
            at = positions[live]
            lengths[at] = part.lengths[live]
            filled += len(at)
        if filled != n:
            raise ValueError(f"{filled} live rows for {n} chunk ids")
        self._parts = [(part, positions, bool((positions < 0).any())) for part, positions in parts]
        self._to_global = to_global
        self._columns = [None] + [
            dict(zip(ids.tolist(), range(len(ids)), strict=True)) for ids in to_global[1:]
        ]
        self._first_terms = len(first)
        self._term_index = index
        self._terms = terms
        self.df = df
        self.idf = _okapi_idf(df, n, self.params.epsilon)
        p = self.params
        avgdl = float(lengths.mean()) if n else 0.0
        self._length_norm = (
            p.k1 * (1.0 - p.b + p.b * lengths / avgdl) if avgdl > 0 else np.full(n, p.k1)
        )
        self._rows: dict[str, int] | None = None

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def build(cls, terms: TermMatrix, params: Bm25Params | None = None) -> LexicalIndex:
        """One part holding every row of `terms` (rows in canonical order)."""
        n_chunks, n_terms = len(terms.chunk_ids), len(terms.vocabulary)
        if terms.tf.shape != (n_chunks, n_terms):
            raise ValueError(
                f"tf shape {terms.tf.shape} does not match {n_chunks} chunks × {n_terms} terms"
            )
        part = Postings.from_matrix(list(terms.vocabulary), terms.tf)
        return cls([(part, np.arange(n_chunks, dtype=np.int64))], list(terms.chunk_ids), params)

    # ---- queries -----------------------------------------------------------------------
    @cached_property
    def vocabulary(self) -> list[str]:
        """The terms some chunk holds, sorted."""
        return sorted(t for t, n in zip(self._terms, self.df.tolist(), strict=True) if n > 0)

    def any_term(self) -> str | None:
        """Some term a chunk holds (what a warm-up runs a first query with), None if none."""
        return next((t for t, n in zip(self._terms, self.df.tolist(), strict=True) if n > 0), None)

    @property
    def rows(self) -> dict[str, int]:
        """Chunk id → its row (built on first use)."""
        if self._rows is None:
            self._rows = {c: i for i, c in enumerate(self.chunk_ids)}
        return self._rows

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def term_id(self, token: str) -> int | None:
        """The term's id if some chunk holds it."""
        g = self._term_index.get(token)
        return g if g is not None and self.df[g] > 0 else None

    def term_ids(self, tokens: Iterable[str]) -> list[int]:
        """Ids of the tokens some chunk holds, in order, repeats kept."""
        return [g for t in tokens if (g := self.term_id(t)) is not None]

    def term(self, term_id: int) -> str:
        return self._terms[term_id]

    def idf_of(self, token: str) -> float | None:
        g = self.term_id(token)
        return None if g is None else float(self.idf[g])

    def _entries(self, term_id: int) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        """(canonical rows, term frequencies as float64) of the term's live postings, part
        by part."""
        for k, (part, positions, has_dead) in enumerate(self._parts):
            if k == 0:
                col = term_id if term_id < self._first_terms else None
            else:
                col = self._columns[k].get(term_id)
            if col is None:
                continue
            rows, tf = part.column(col)
            at = positions[rows]
            if has_dead:
                live = at >= 0
                at, tf = at[live], tf[live]
            if len(at):
                yield at, np.asarray(tf, dtype=np.float64)

    @cached_property
    def _located(self) -> tuple[np.ndarray, np.ndarray]:
        """For each row, its part and its row in that part (built on first use)."""
        n = len(self.chunk_ids)
        part_of = np.zeros(n, dtype=np.int32)
        local = np.zeros(n, dtype=np.int64)
        for k, (_, positions, _) in enumerate(self._parts):
            live = np.flatnonzero(positions >= 0)
            part_of[positions[live]] = k
            local[positions[live]] = live
        return part_of, local

    def row_counts(self, row: int) -> dict[str, int]:
        """The term frequencies of the chunk at `row`."""
        part_of, local = self._located
        part = self._parts[int(part_of[row])][0]
        r = int(local[row])
        a, b = int(part.csr_indptr[r]), int(part.csr_indptr[r + 1])
        cols = part.csr_indices[a:b].tolist()
        counts = part.csr_data[a:b].tolist()
        return {part.vocabulary[c]: int(f) for c, f in zip(cols, counts, strict=True)}

    def row_entries(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every entry of the chunks at `rows`: (the position in `rows` it belongs to, its
        term id, its term frequency as float64), gathered without a Python loop per row."""
        rows = np.asarray(rows, dtype=np.int64)
        part_of, local = self._located
        which, terms, freqs = [], [], []
        for k, (part, _, _) in enumerate(self._parts):
            sel = np.flatnonzero(part_of[rows] == k)
            if not len(sel):
                continue
            r = local[rows[sel]]
            starts = part.csr_indptr[r].astype(np.int64)
            lengths = part.csr_indptr[r + 1].astype(np.int64) - starts
            total = int(lengths.sum())
            at = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
            which.append(np.repeat(sel, lengths))
            terms.append(self._to_global[k][part.csr_indices[at]])
            freqs.append(np.asarray(part.csr_data[at], dtype=np.float64))
        if not which:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, np.empty(0, dtype=np.float64)
        return np.concatenate(which), np.concatenate(terms), np.concatenate(freqs)

    def term_entries(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, term frequencies) of the chunks holding a term."""
        found = list(self._entries(term_id))
        if not found:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        return np.concatenate([a for a, _ in found]), np.concatenate([f for _, f in found])

    def postings(self, term_id: int) -> np.ndarray:
        """Rows (chunk positions) of the chunks holding a term, ascending."""
        found = [at for at, _ in self._entries(term_id)]
        return np.sort(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)

    def document_frequency(self, term_id: int) -> int:
        return int(self.df[term_id])

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every chunk for a tokenised query (rank-bm25 `get_scores`)."""
        return self.weighted_scores(Counter(query_tokens))

    def weighted_scores(self, token_weights: Mapping[str, float]) -> np.ndarray:
        """Σ_v w(v)·BM25(v, c) for every chunk c; tokens outside the vocabulary are ignored."""
        return self._accumulate(token_weights)[0]

    def weighted_presence(self, token_weights: Mapping[str, float]) -> np.ndarray:
        """Σ_v w(v)·[v ∈ c]: the no-BM25 ablation of `weighted_scores`."""
        rows, values = [], []
        for token, weight in token_weights.items():
            g = self.term_id(token)
            if g is None or not weight:
                continue
            for at, _ in self._entries(g):
                rows.append(at)
                values.append(np.full(len(at), float(weight)))
        n = len(self.chunk_ids)
        if not rows:
            return np.zeros(n, dtype=np.float64)
        return np.bincount(np.concatenate(rows), weights=np.concatenate(values), minlength=n)

    def weighted_top(
        self, token_weights: Mapping[str, float], n: int, *, presence: bool = False
    ) -> WeightedTop:
        """The n best chunks by `weighted_scores` (`weighted_presence` with `presence`),
        ties by row, with the count and total of every chunk scoring above zero."""
        rho = (
            self.weighted_presence(token_weights)
            if presence
            else self.weighted_scores(token_weights)
        )
        candidates = np.flatnonzero(rho > 0)
        order = top_stable(rho, n, candidates)
        rows = self.rows

        def scored(chunk_id: str) -> bool:
            row = rows.get(chunk_id)
            return row is not None and bool(rho[row] > 0)

        return WeightedTop(
            [self.chunk_ids[i] for i in order],
            rho[order],
            len(candidates),
            float(rho[candidates].sum()),
            scored,
        )

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
        """Σ_v w(v)·BM25(v, ·) over the known tokens; with_rows also returns the chunks any
        of them touched (sorted), which `top_k` uses as its candidate set. Each entry is
        the same float64 expression a precomputed weight matrix would hold, summed per chunk
        in query-term order, so the scores do not depend on how the parts are split."""
        n = len(self.chunk_ids)
        k1 = self.params.k1
        norm, idf = self._length_norm, self.idf
        rows, values = [], []
        for token, weight in token_weights.items():
            g = self.term_id(token)
            if g is None or not weight:
                continue
            for at, f in self._entries(g):
                rows.append(at)
                values.append(idf[g] * (f * (k1 + 1.0) / (f + norm[at])) * float(weight))
        no_rows = np.empty(0, dtype=np.int64)
        if not rows:
            return np.zeros(n, dtype=np.float64), no_rows
        every = np.concatenate(rows)
        out = np.bincount(every, weights=np.concatenate(values), minlength=n)
        if not with_rows:
            return out, no_rows
        mask = np.zeros(n, dtype=bool)
        mask[every] = True
        return out, np.flatnonzero(mask)


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25's idf: negative values floored to ε × mean idf (mean over terms that occur,
    taken before flooring); terms that occur nowhere get 0. The mean's sum is exactly
    rounded (`math.fsum`), so it does not depend on the order the terms are numbered in."""
    idf = np.zeros(df.shape[0], dtype=np.float64)
    present = df > 0
    if not present.any():
        return idf
    n = df[present].astype(np.float64)
    raw = np.log(n_docs - n + 0.5) - np.log(n + 0.5)
    floor = epsilon * (math.fsum(raw.tolist()) / len(raw))
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
