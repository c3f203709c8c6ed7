"""The query-side search files built after each ingest, keyed by the corpus fingerprint:
FAISS over chunk embeddings, BM25 over chunk tokens, and BM25 over each chunk's utility
questions (SpectRAG's question matching). Rebuilt from the store whenever missing or stale.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from graph.base import GraphStore, TermMatrix
from graph.dense import DenseIndex
from graph.lexical import Bm25Params, LexicalIndex
from ingest.tokens import Analyzer


@dataclass(slots=True)
class SearchIndexes:
    dense: DenseIndex
    lexical: LexicalIndex
    utility: LexicalIndex

    @staticmethod
    def load(directory: Path, key: str) -> SearchIndexes | None:
        dense = DenseIndex.load(directory, key)
        lexical = LexicalIndex.load(directory / "bm25.npz", key)
        utility = LexicalIndex.load(directory / "utility.npz", key)
        if dense is None or lexical is None or utility is None:
            return None
        return SearchIndexes(dense, lexical, utility)

    @staticmethod
    def build(store: GraphStore, directory: Path, key: str, analyzer: Analyzer) -> SearchIndexes:
        vectors = store.chunk_vectors("embedding")
        ids = sorted(vectors)
        matrix = (
            np.stack([vectors[i] for i in ids]).astype(np.float32)
            if ids
            else np.zeros((0, 0), dtype=np.float32)
        )
        dense = DenseIndex.build(ids, matrix)
        lexical = LexicalIndex.build(store.term_matrix(), Bm25Params())
        utility = LexicalIndex.build(question_terms(store, analyzer), Bm25Params())
        dense.save(directory, key)
        lexical.save(directory / "bm25.npz", key)
        utility.save(directory / "utility.npz", key)
        return SearchIndexes(dense, lexical, utility)

    @classmethod
    def load_or_build(
        cls, store: GraphStore, directory: Path, key: str, analyzer: Analyzer
    ) -> SearchIndexes:
        return cls.load(directory, key) or cls.build(store, directory, key, analyzer)


def question_terms(store: GraphStore, analyzer: Analyzer) -> TermMatrix:
    chunks = store.corpus()
    counts = [Counter(analyzer.tokens(" ".join(c.questions))) for c in chunks]
    vocabulary = sorted({t for c in counts for t in c})
    col = {t: j for j, t in enumerate(vocabulary)}
    rows, cols, vals = [], [], []
    for i, c in enumerate(counts):
        for t, n in c.items():
            rows.append(i)
            cols.append(col[t])
            vals.append(float(n))
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(chunks), len(vocabulary)))
    return TermMatrix([c.id for c in chunks], vocabulary, tf)
