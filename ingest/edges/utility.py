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

import numpy as np

from ingest.config import EdgeConfig
from ingest.edges import topk
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.model import KindChange, KindEdges
from ingest.edges.stats import octave
from ingest.edges.stored import StoredEdges, StoredStates
from ingest.edges.vectors import VectorSpace, sparse_space

KIND = "UTILITY"


def _weight(score: float) -> float:
    return min(score, 1.0)


def idf(df: int, n: int) -> float:
    return math.log((1.0 + octave(n)) / (1.0 + octave(df))) + 1.0


def space(corpus: EdgeCorpus, cfg: EdgeConfig) -> VectorSpace:
    """Each row's weights are (1 + ln count) · idf, in its terms' sorted order. Computed
    once per distinct count and per distinct df (Python's `math.log`, then one float
    multiplication per entry, as a per-entry loop would), so the rows are bit-identical
    whichever way they are built; only the per-term work runs in numpy."""
    ids = sorted(corpus.terms)
    df = corpus.term_df
    vocab = {t: i for i, t in enumerate(sorted(df))}
    by_df = {d: idf(d, len(ids)) for d in set(df.values())}
    term_weight = np.array([by_df[df[t]] for t in vocab])
    terms: list[str] = []
    counts: list[int] = []
    lengths = np.zeros(len(ids), dtype=np.int64)
    for i, cid in enumerate(ids):
        row = corpus.terms[cid]
        ordered = sorted(row)
        terms.extend(ordered)
        counts.extend(map(row.__getitem__, ordered))
        lengths[i] = len(ordered)
    columns = np.fromiter(map(vocab.__getitem__, terms), np.int64, len(terms))
    count_array = np.asarray(counts, dtype=np.int64)
    tf = np.zeros(int(count_array.max()) + 1 if len(count_array) else 1)
    for c in np.unique(count_array):
        tf[c] = 1.0 + math.log(int(c))
    weights = tf[count_array] * term_weight[columns]
    return sparse_space(ids, lengths, columns, weights, cfg.utility_min_similarity)


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
    if moved_terms:
        dirty |= {cid for cid, counts in corpus.terms.items() if moved_terms & counts.keys()}
    return dirty


def update(
    change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges, states: StoredStates
) -> KindChange:
    return topk.update(
        space(change.corpus, cfg),
        KIND,
        cfg.utility_k,
        _weight,
        moved_vectors(change),
        change.old_edges(KIND),
        stored,
        states,
    )
