"""Search reads answered by Neo4j itself, for database serving: a query process that holds
nothing the size of the corpus, so that several of them can serve one Neo4j cluster.

- nearest chunks by embedding: the `chunk_embedding` vector index (HNSW, approximate);
- weighted BM25 over a chunk's tokens: the `chunk_tokens` full-text index, which indexes
  the tokens neorag's analyzer made (whitespace-analysed: Lucene sees neorag's terms), so a
  TIGRAG expansion Σ p̂(v)·BM25(v, c) is one Lucene query with a boost per term. Lucene's
  BM25 is not rank-bm25's: k1 = 1.2 against 1.5, idf log(1 + (N − n + 0.5)/(n + 0.5)) over
  every collection's chunks, lengths stored in a byte. Rankings are close, scores differ;
- title links: each document's case-folded title key (graph/titles.py), looked up by the
  question's phrases through the `document_title_key` index;
- token PageRank: GDS on the server (`GdsAnalytics.token_ppr`), unchanged.

Reads route to any member (`RoutingControl.READ`); the two indexes are kept up to date by
the database in the ingest's own transactions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from graph.errors import NeoragError
from graph.neo4j.store_base import TITLE_KEYS

if TYPE_CHECKING:
    from graph.neo4j.store import Neo4jStore

LUCENE_MAX_CLAUSES = 1000  # Lucene refuses a query of more than 1024 clauses
_WIDEN = 4  # vector candidates read per chunk wanted, then ×4 per retry


class NotPrepared(NeoragError):
    """The collection lacks what database serving reads (written by an older neorag)."""


def lucene_terms(weights: Mapping[str, float], field: str = "tokens") -> str:
    """`field:"term"^weight ...` for the positive weights (the largest first when there are
    more than Lucene takes); each term quoted, so no character in it is syntax."""
    kept = sorted(((w, t) for t, w in weights.items() if w > 0), key=lambda x: (-x[0], x[1]))
    parts = []
    for weight, term in kept[:LUCENE_MAX_CLAUSES]:
        quoted = term.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'{field}:"{quoted}"^{weight:.9f}'.rstrip("0").rstrip("."))
    return " ".join(parts)


class Neo4jSearch:
    """The search reads of one collection, on its store's driver."""

    def __init__(self, store: Neo4jStore) -> None:
        self.store = store

    def check_prepared(self) -> None:
        """Raise `NotPrepared`, naming the fix, unless the collection can be served."""
        state = self.store.read("fulltext_index_state")
        if not state or self.store.get_meta(TITLE_KEYS) is None:
            raise NotPrepared(
                f"collection {self.store.collection!r} was written by an older neorag, "
                "without the full-text index and title keys database serving reads: run "
                "`neorag ingest` on it once (an unchanged folder is enough)"
            )

    def lexical(self, weights: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        """Chunks by Σ w(v)·BM25(v, c) over the weighted tokens, best first, at most
        `limit` (only chunks holding one of them)."""
        terms = lucene_terms(weights)
        if not terms or limit <= 0:
            return []
        collection = self.store.collection  # a checked name: no character needs quoting
        query = f'+collection:"{collection}"^0 +({terms})'
        rows = self.store.read("chunk_fulltext_search", query=query, limit=limit)
        return [(r["id"], float(r["score"])) for r in rows]

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """This collection's k chunks nearest `vector` (cosine), best first."""
        if k <= 0:
            return []
        values = [float(x) for x in np.asarray(vector, dtype=np.float32)]
        candidates = max(k * _WIDEN, 100)
        total = self.store.chunk_count()
        while True:
            rows = self.store.read("chunk_vector_search", candidates=candidates, vector=values)
            if len(rows) >= k or candidates >= 4 * max(total, 1) or not total:
                break  # other collections' chunks crowd the nearest: read deeper
            candidates *= _WIDEN
        # The index's cosine score is (1 + cos) / 2; callers compare it with FAISS's cos.
        return [(r["id"], 2.0 * float(r["score"]) - 1.0) for r in rows[:k]]

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of these chunks (those that have one)."""
        if not ids:
            return {}
        rows = self.store.read("chunk_embeddings", ids=list(ids))
        return {r["id"]: np.asarray(r["embedding"], dtype=np.float32) for r in rows}

    def known_tokens(self, tokens: Sequence[str]) -> set[str]:
        if not tokens:
            return set()
        return {r["token"] for r in self.store.read("known_tokens", tokens=list(tokens))}

    def titles_by_key(self, keys: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """Document id → (title, first chunk id) of the documents whose title key is one
        of `keys`."""
        if not keys:
            return {}
        rows = self.store.read("titles_by_key", keys=list(keys))
        return {r["doc_id"]: (r["title"] or "", r["chunk_id"]) for r in rows}

    def titles_of(self, doc_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        if not doc_ids:
            return {}
        rows = self.store.read("titles_of_documents", doc_ids=list(doc_ids))
        return {r["doc_id"]: (r["title"] or "", r["chunk_id"]) for r in rows}

    def document_count(self) -> int:
        return int(self.store.read("document_count")[0]["documents"])
