"""Database serving: an engine that answers from Neo4j's own indexes and GDS and holds
nothing the size of the corpus, so several API replicas can serve one Neo4j cluster.

`Engine` (app/engine.py) opens the collection's FAISS and BM25 files in the process (mapped,
fast, one machine). `DatabaseEngine` provides the same `RetrievalContext` from reads:

  dense:   nearest chunks from the `chunk_embedding` vector index, pool embeddings by id;
  lexical: BM25 and TIGRAG's weighted BM25 from the `chunk_tokens` full-text index;
  links:   title links from the documents' stored title keys;
  tokens:  which question words the token graph holds, looked up (and cached per version);
  PPR:     token PageRank in GDS, on the projection the last ingest published.

The modes that need whole-corpus structures in process (the bridge walk, LiteRAG's and
SpectRAG's graphs) are not served this way; `DATABASE_MODES` are. Its `default` is TIGRAG
(docs/architecture.md: Database serving, for what it costs against the in-process path).
What a process holds is bounded: the query model, and caches with a fixed number of
entries.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from app.query_side import QuerySide
from app.retrieval import build_retriever
from app.retrieval.base import Retriever
from app.retrieval.links import doc_id_of
from app.services import open_store
from app.settings import Settings
from graph.errors import EmptyIndex, NeoragError
from graph.lexical import WeightedTop
from graph.neo4j.search import Neo4jSearch
from graph.titles import folded_phrases
from ingest.edges import TitleMatcher
from ingest.model_stamp import check_query_model, read_stamp
from ingest.published import DERIVED_KEY
from ingest.tokens import Analyzer

T = TypeVar("T")
log = logging.getLogger(__name__)

# mode asked for → the mode that answers it
DATABASE_MODES = {
    "default": "tigrag",
    "tigrag": "tigrag",
    "hybrid": "hybrid",
    "dense": "dense",
    "bm25": "bm25",
}
CANDIDATE_DEPTH = 10  # TIGRAG's pool mass is measured over this many times the pool
CACHE_ENTRIES = 50_000


class _Bounded(OrderedDict[str, Any]):
    """A least-recently-used map of at most `CACHE_ENTRIES` entries."""

    def remember(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > CACHE_ENTRIES:
            self.popitem(last=False)


class DatabaseDense:
    """The dense index's reads, answered by the vector index."""

    def __init__(self, search: Neo4jSearch, chunks: int, dim: int) -> None:
        self._search = search
        self._chunks = chunks
        self._dim = dim

    def __len__(self) -> int:
        return self._chunks

    @property
    def dim(self) -> int:
        return self._dim

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        return self._search.nearest(query, k)

    def vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Unit vectors of these chunks, in order (a chunk without one: zeros)."""
        found = self._search.embeddings(chunk_ids)
        out = np.zeros((len(chunk_ids), self._dim), dtype=np.float32)
        for i, cid in enumerate(chunk_ids):
            v = found.get(cid)
            if v is not None:
                out[i] = v / max(float(np.linalg.norm(v)), 1e-12)
        return out


class DatabaseLexical:
    """The lexical index's reads, answered by the full-text index."""

    def __init__(self, search: Neo4jSearch, chunks: int, any_term: Callable[[], str | None]):
        self._search = search
        self._chunks = chunks
        self._any_term = any_term

    def __len__(self) -> int:
        return self._chunks

    def any_term(self) -> str | None:
        return self._any_term()

    def top_k(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        return self._search.lexical(Counter(query_tokens), k)

    def weighted_top(
        self, token_weights: Mapping[str, float], n: int, *, presence: bool = False
    ) -> WeightedTop:
        """The n best chunks by Σ w·BM25, with the count and mass of the best
        `CANDIDATE_DEPTH`·n (the index does not total every match)."""
        if presence:
            raise NeoragError("database serving scores tokens by BM25 only (tigrag.use_bm25)")
        rows = self._search.lexical(token_weights, n * CANDIDATE_DEPTH)
        found = {cid for cid, _ in rows}
        scores = np.array([s for _, s in rows[:n]], dtype=np.float64)
        return WeightedTop(
            [cid for cid, _ in rows[:n]],
            scores,
            len(rows),
            float(sum(s for _, s in rows)),
            found.__contains__,
        )


class _TitleTable(Mapping[str, Any]):
    """doc id → one field of its (title, first chunk), read from the store on a miss."""

    def __init__(self, links: DatabaseTitleLinks, field: int) -> None:
        self._links = links
        self._field = field

    def __getitem__(self, doc_id: str) -> Any:
        found = self._links.lookup([doc_id]).get(doc_id)
        if found is None or found[self._field] is None:
            raise KeyError(doc_id)
        return found[self._field]

    def __iter__(self) -> Any:
        raise NeoragError("database serving does not list every document")

    def __len__(self) -> int:
        return self._links.documents()


class DatabaseTitleLinks:
    """`TitleLinks` from the documents' stored title keys: the titles a text can name are
    those whose key is one of its phrases; the usual matcher then picks among them, so a
    text links to the same documents as through the full table."""

    def __init__(self, search: Neo4jSearch, analyzer: Analyzer) -> None:
        self._search = search
        self._analyzer = analyzer
        self._cache = _Bounded()
        self._lock = threading.Lock()
        self.title: Mapping[str, str] = _TitleTable(self, 0)
        self.first_chunk: Mapping[str, str] = _TitleTable(self, 1)

    def find(self, text: str) -> list[str]:
        found = self._search.titles_by_key(folded_phrases(text))
        self._keep(found)
        matcher = TitleMatcher({d: t for d, (t, _) in found.items()}, self._analyzer, fold=True)
        return sorted(matcher.find(text))

    def lookup(self, doc_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        with self._lock:
            known = {d: self._cache[d] for d in doc_ids if d in self._cache}
        missing = [d for d in doc_ids if d not in known]
        if missing:
            read = self._search.titles_of(missing)
            self._keep(read)
            known.update(read)
        return known

    def documents(self) -> int:
        return self._search.document_count()

    def _keep(self, found: Mapping[str, tuple[str, str | None]]) -> None:
        with self._lock:
            for doc_id, value in found.items():
                self._cache.remember(doc_id, value)


class _Served:
    """The chunks a database-served query may return: whatever the database holds (it
    answers from the committed graph; there is no published copy to lag behind)."""

    def __init__(self, chunks: int) -> None:
        self._chunks = chunks

    def __contains__(self, chunk_id: object) -> bool:
        return True

    def __len__(self) -> int:
        return self._chunks


class DatabaseEngine(QuerySide):
    """The `RetrievalContext` of database serving (see the module docstring); it offers
    what `app.service` uses of an `Engine`."""

    in_process = False

    def __init__(self, settings: Settings, store: Any = None) -> None:
        if settings.backend != "neo4j":
            raise NeoragError(
                "database serving (NEORAG_RETRIEVAL__SERVING=database) needs the neo4j backend"
            )
        # Token PageRank in GDS, whatever settings built without validation say.
        algorithms = settings.algorithms.model_copy(update={"token_ppr": "gds"})
        self.settings = settings.model_copy(update={"algorithms": algorithms})
        self.store = store or open_store(self.settings)
        try:
            self.search = Neo4jSearch(self.store)
            self.search.check_prepared()
            self.analyzer = Analyzer(settings.ingest.tokens)
            self._lock = threading.Lock()
            self._key: str | None = None
            self._tokens = _Bounded()
            self._derived: dict[tuple[Any, ...], Any] = {}
            self.refresh()
        except BaseException:
            self.store.close()
            raise

    def refresh(self, *, background: bool = False, wait: bool = True) -> bool:
        """Follow a newly published index: what the database holds is already current, so
        only the counts, the token cache and GDS's projection name are read again."""
        key = self.store.get_meta(DERIVED_KEY)
        if key is not None and key == self._key:
            return False
        check_query_model(self.store, self.settings.ingest.models)
        with self._lock:
            chunks = self.store.chunk_count()
            dim = self._vector_index_dimension() if chunks else 0
            self.store.published_changed()
            self.dense = DatabaseDense(self.search, chunks, dim)
            self.lexical = DatabaseLexical(self.search, chunks, self._any_token)
            self.utility = self.lexical
            self.links = DatabaseTitleLinks(self.search, self.analyzer)
            self.indexed = _Served(chunks)
            self._tokens = _Bounded()
            self._derived.clear()
            self._key = key
        return True

    def _vector_index_dimension(self) -> int:
        """The `chunk_embedding` index's dimension, which must be this collection's: the
        index is one per database, and while another collection's chunks hold it at
        another dimension (another embedding model) this one cannot be served from it."""
        rows = self.store.read("vector_index_dimension")
        stamp = read_stamp(self.store)
        held = int(rows[0]["dimension"]) if rows else None
        if stamp is not None and held != stamp.dimension:
            raise NeoragError(
                f"database serving needs the Neo4j vector index chunk_embedding at this "
                f"collection's dimension ({stamp.dimension}), but "
                + (f"another collection holds it at {held}" if held else "there is none")
                + ": keep one embedding model per Neo4j database (docs/operations.md), or "
                "serve in process (NEORAG_RETRIEVAL__SERVING=in-process)"
            )
        return int(held or 0)

    def _any_token(self) -> str | None:
        rows = self.store.read("any_token")
        return rows[0]["token"] if rows else None

    def snapshot(self) -> DatabaseEngine:
        self.query_model  # noqa: B018 - load the model once here, not per request
        return self

    def wait_staged(self, timeout: float | None = None) -> None:
        return None

    def settle(self, timeout: float = 600.0) -> None:
        return None

    def require_index(self) -> None:
        if len(self.dense) == 0:
            raise EmptyIndex("the neo4j index is empty: run `neorag ingest PATH` first")

    def has_token(self, token: str) -> bool:
        found = self._tokens.get(token)
        if found is None:
            self.known_tokens([token])
            found = self._tokens.get(token, False)
        return bool(found)

    def known_tokens(self, tokens: Iterable[str]) -> set[str]:
        """Which tokens the graph holds, in one read for those not cached."""
        wanted = list(dict.fromkeys(tokens))
        missing = [t for t in wanted if t not in self._tokens]
        if missing:
            held = self.search.known_tokens(missing)
            with self._lock:
                for t in missing:
                    self._tokens.remember(t, t in held)
        return {t for t in wanted if self._tokens.get(t)}

    def doc_ids(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        return {c: doc_id_of(c) for c in chunk_ids}

    def document_sizes(self) -> Counter[str]:
        raise NeoragError("database serving does not hold every document's size")

    def derived(self, name: str, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        full = (name, self._key, *key)
        with self._lock:
            if full in self._derived:
                return self._derived[full]  # type: ignore[no-any-return]
        value = build()
        with self._lock:
            self._derived[full] = value
        return value

    def latest_derived(self, name: str, key: tuple[Any, ...]) -> Any:
        return None

    def retriever(self, mode: str) -> Retriever:
        served = DATABASE_MODES.get(mode)
        if served is None:
            raise NeoragError(
                f"mode {mode!r} holds corpus-wide structures in process; database serving "
                f"answers {', '.join(DATABASE_MODES)}"
            )
        return build_retriever(served, self)

    def close(self) -> None:
        self.store.close()
