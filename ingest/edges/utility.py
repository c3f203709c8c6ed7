"""UTILITY: chunks that answer similar questions. Each chunk with utility questions is a
TF-IDF vector over the valid tokens of its questions (tf = 1 + log count); a chunk links to
its `utility_k` most similar chunks by cosine, kept from `utility_min_similarity` up.

The idf is log((1 + n) / (1 + df)) + 1 with n (chunks that have questions) and each term's
df rounded to a power of two (`ingest.edges.stats`): an update then knows exactly which
vectors moved — the new chunks and the chunks holding a term whose rounded df changed — and
a change of the rounded n asks for a full build.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from ingest.config import EdgeConfig
from ingest.edges import topk
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.indexed import IndexedCorpus
from ingest.edges.model import KindChange, KindEdges
from ingest.edges.stats import octave
from ingest.edges.stored import StoredEdges, StoredStates
from ingest.edges.vectors import VectorSpace, sparse_space

KIND = "UTILITY"
# Float scores of TF-IDF rows err from the exact quantised ones by far less than this: a
# candidate within it of the floor is scored exactly.
_SLACK = 1e-4


def _weight(score: float) -> float:
    return min(score, 1.0)


def idf(df: int, n: int) -> float:
    return math.log((1.0 + octave(n)) / (1.0 + octave(df))) + 1.0


def space(corpus: EdgeCorpus, cfg: EdgeConfig) -> VectorSpace:
    """Every chunk with questions, as a row of the sparse space."""
    return _space(corpus.terms, corpus.term_df, sorted(corpus.terms), len(corpus.terms), cfg)


def _space(
    terms: Mapping[str, Counter[str]],
    df: Mapping[str, int],
    ids: list[str],
    n: int,
    cfg: EdgeConfig,
) -> VectorSpace:
    """The rows of `ids` (sorted), with `df` the corpus's document frequencies and `n` its
    chunks with questions. Each row's weights are (1 + ln count) · idf, in its terms'
    sorted order. Computed once per distinct count and per distinct df (Python's
    `math.log`, then one float multiplication per entry, as a per-entry loop would), so the
    rows are bit-identical whichever rows share the space; only the per-term work runs in
    numpy."""
    used = sorted({t for cid in ids for t in terms[cid]})
    vocab = {t: i for i, t in enumerate(used)}
    by_df = {d: idf(d, n) for d in {df[t] for t in used}}
    term_weight = np.array([by_df[df[t]] for t in used])
    flat: list[str] = []
    counts: list[int] = []
    lengths = np.zeros(len(ids), dtype=np.int64)
    for i, cid in enumerate(ids):
        row = terms[cid]
        ordered = sorted(row)
        flat.extend(ordered)
        counts.extend(map(row.__getitem__, ordered))
        lengths[i] = len(ordered)
    columns = np.fromiter(map(vocab.__getitem__, flat), np.int64, len(flat))
    count_array = np.asarray(counts, dtype=np.int64)
    tf = np.zeros(int(count_array.max()) + 1 if len(count_array) else 1)
    for c in np.unique(count_array):
        tf[c] = 1.0 + math.log(int(c))
    weights = tf[count_array] * term_weight[columns] if len(columns) else np.zeros(0)
    return sparse_space(ids, lengths, columns, weights, cfg.utility_min_similarity)


class IndexedUtilitySpace:
    """UTILITY's score space over an indexed corpus. A chunk's partners share one of its
    question terms (a pair sharing none scores 0, below any floor), so they are among the
    utility index's postings of its terms. Every such chunk is first scored approximately
    at once (floats, from the postings and the candidates' rows, without quantising), and
    the few that come within `_SLACK` of the floor are scored exactly, in a space of just
    those rows, as the whole space would score them."""

    def __init__(self, corpus: IndexedCorpus, cfg: EdgeConfig) -> None:
        self.corpus = corpus
        self.cfg = cfg
        self.n = len(corpus.terms)
        self._index = corpus.utility_index

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.corpus.terms

    def _idf(self, term_ids: np.ndarray) -> np.ndarray:
        df = self._index.df[term_ids].astype(np.float64)
        rounded = np.where(df > 0, 2.0 ** np.round(np.log2(np.maximum(df, 1))), 0.0)
        return np.log((1.0 + octave(self.n)) / (1.0 + rounded)) + 1.0

    def _candidates(self, x: str, own: Counter[str]) -> list[str]:
        """The chunks sharing a term with `x` whose approximate score reaches the floor
        less the slack."""
        index = self._index
        ids = [g for t in sorted(own) if (g := index.term_id(t)) is not None]
        if not ids:
            return []
        term_ids = np.asarray(ids, dtype=np.int64)
        weight_x = np.asarray(
            [1.0 + math.log(own[index.term(g)]) for g in ids], dtype=np.float64
        ) * self._idf(term_ids)
        norm_x = math.sqrt(float(weight_x @ weight_x))
        rows_list, dots = [], []
        for g, wx in zip(ids, weight_x.tolist(), strict=True):
            at, tf = index.term_entries(g)
            rows_list.append(at)
            dots.append(wx * (1.0 + np.log(tf)) * self._idf(np.full(len(at), g)))
        rows = np.concatenate(rows_list)
        dot = np.bincount(rows, weights=np.concatenate(dots))
        touched = np.unique(rows)
        which, terms, tf = index.row_entries(touched)
        weights = (1.0 + np.log(tf)) * self._idf(terms)
        norms = np.sqrt(np.bincount(which, weights=weights * weights, minlength=len(touched)))
        with np.errstate(divide="ignore", invalid="ignore"):
            score = dot[touched] / (norm_x * norms)
        keep = touched[score >= self.cfg.utility_min_similarity - _SLACK]
        return [index.chunk_ids[i] for i in keep.tolist() if index.chunk_ids[i] != x]

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        corpus = self.corpus
        corpus.terms.prefetch(ids)
        out: dict[str, dict[str, float]] = {}
        for x in ids:
            own = corpus.terms.get(x)
            if own is None:
                continue
            rows = sorted({x, *self._candidates(x, own)})
            corpus.terms.prefetch(rows)
            rows = [c for c in rows if corpus.terms.get(c) is not None]
            corpus.term_df.prefetch(sorted({t for c in rows for t in corpus.terms[c]}))
            scored = _space(corpus.terms, corpus.term_df, rows, self.n, self.cfg)
            out[x] = scored.partners([x])[x]
        return out


def build(corpus: EdgeCorpus, cfg: EdgeConfig) -> KindEdges:
    return topk.build(space(corpus, cfg), KIND, cfg.utility_k, _weight)


def _old_n(change: CorpusChange) -> int:
    return change.old_count(
        len(change.corpus.terms), lambda c: bool(c.questions), lambda r: r.has_questions
    )


def needs_full_build(change: CorpusChange) -> bool:
    return octave(_old_n(change)) != octave(len(change.corpus.terms))


def moved_vectors(change: CorpusChange) -> set[str]:
    """Chunks whose vector differs from the one the stored edges were built with."""
    corpus = change.corpus
    touched = Counter(t for c in change.added for t in corpus.terms.get(c.id, ()))
    touched.subtract(t for r in change.removed.values() for t in r.terms)
    moved_terms = {
        t
        for t, delta in touched.items()
        if delta and octave(corpus.term_df[t]) != octave(corpus.term_df[t] - delta)
    }
    dirty = {c.id for c in change.added if c.id in corpus.terms}
    if moved_terms and isinstance(corpus, IndexedCorpus):
        dirty |= corpus.chunks_with_terms(sorted(moved_terms))
    elif moved_terms:
        dirty |= {cid for cid, counts in corpus.terms.items() if moved_terms & counts.keys()}
    return dirty


def update(
    change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges, states: StoredStates
) -> KindChange:
    corpus = change.corpus
    indexed = isinstance(corpus, IndexedCorpus)
    scored = IndexedUtilitySpace(corpus, cfg) if indexed else space(corpus, cfg)
    return topk.update(
        scored,
        KIND,
        cfg.utility_k,
        _weight,
        moved_vectors(change),
        change.old_edges(KIND),
        stored,
        states,
    )
