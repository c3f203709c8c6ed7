"""The query-side runtime: one store, the dense and lexical indexes, the embedding model and
the analyzer, opened once per process and shared by every retriever.

The FAISS and BM25 files are keyed by the stored corpus's fingerprint; when they are
missing or stale (another process re-ingested), they are rebuilt from the store. Queries
are embedded with the configured model, which must be the one the collection was embedded
with (`ingest.model_stamp`): another model's vectors would find the wrong neighbours.

A long-running engine (the API, the chat) moves to a newly published index in the
background (`refresh(background=True)`): the new indexes are loaded and the structures the
modes in use derive from them (the bridge graph, LiteRAG's tables, the token graph) are
built on a thread, while requests keep answering from the version they have; the engine
switches once the new version is warm. On a large collection those builds take minutes,
which would otherwise be the first requests' wait after every re-ingest.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from app.query_side import QuerySide
from app.retrieval import build_retriever
from app.retrieval.base import Retriever
from app.retrieval.links import TitleLinks, doc_id_of
from app.services import index_dir, open_store
from app.settings import Settings
from graph.base import GraphStore
from graph.dense import DenseIndex
from graph.errors import EmptyIndex
from graph.lexical import LexicalIndex
from ingest.indexes import SearchIndexes
from ingest.model_stamp import check_query_model
from ingest.published import DERIVED_KEY, corpus_fingerprint
from ingest.tokens import Analyzer

if TYPE_CHECKING:
    from app.database_engine import DatabaseEngine

T = TypeVar("T")
log = logging.getLogger(__name__)


class Engine(QuerySide):
    """The runtime the retrievers answer through: it provides what
    `app.retrieval.base.RetrievalContext` lists (and so do its snapshots), and builds
    retrievers by mode name."""

    in_process = True

    def __init__(self, settings: Settings, store: GraphStore | None = None) -> None:
        self.settings = settings
        self.store = store or open_store(settings)
        self.analyzer = Analyzer(settings.ingest.tokens)
        self._lock = threading.Lock()
        self._key: str | None = None
        # Shared by every snapshot (copy.copy keeps these objects): see `derived`.
        self._derived: dict[tuple[Any, ...], tuple[Any, DenseIndex, LexicalIndex]] = {}
        self._derived_lock = threading.Lock()
        self._building: dict[tuple[Any, ...], threading.Lock] = {}  # one lock per build
        self._modes: set[str] = set()  # modes asked for so far: what a new version warms
        self._staging: list[tuple[threading.Thread, float]] = []  # a background load, started
        self.dense: DenseIndex
        self.lexical: LexicalIndex
        self.utility: LexicalIndex
        self.links: TitleLinks
        self.indexed: frozenset[str] = frozenset()
        self._vocab: dict[str, int] = {}
        try:
            self.refresh()
        except Exception:
            self.store.close()
            raise

    def refresh(self, *, background: bool = False, wait: bool = True) -> bool:
        """Load (or rebuild) the indexes if the store changed since; True if it did. With
        `background`, an engine that already answers from an index loads and warms the new
        one on a thread and switches when that is done; callers wait for it at most
        `refresh_wait_seconds` after it started (a small collection is switched to before
        they answer; a large one answers from the previous version meanwhile), or not at
        all without `wait` (a health probe answers at once)."""
        key = self.store.get_meta(DERIVED_KEY)
        if key is not None and key == self._key:
            return False
        check_query_model(self.store, self.settings.ingest.models)
        if background and key is not None and self._key is not None:
            thread, started = self._stage(key)
            remaining = started + self.settings.retrieval.refresh_wait_seconds - time.monotonic()
            if wait and remaining > 0:
                thread.join(remaining)
            return self._key == key
        with self._lock:
            if key is not None and key == self._key:
                return False  # another thread loaded it while this one waited
            self._load(key or corpus_fingerprint(self.store.documents(), self.settings.ingest))
        return True

    def _load(self, key: str) -> None:
        self.store.published_changed()
        found = SearchIndexes.load_or_build(
            self.store, index_dir(self.settings), key, self.analyzer, self.settings.ingest.index
        )
        self.dense, self.lexical, self.utility = found.dense, found.lexical, found.utility
        self.indexed = frozenset(self.dense.ids)
        self._vocab = {t: i for i, t in enumerate(self.lexical.vocabulary)}
        self.links = TitleLinks(self.store.document_titles(), self.analyzer)
        self._key = key

    def _stage(self, key: str) -> tuple[threading.Thread, float]:
        """The thread loading a new version (started now unless one runs) and its start."""
        with self._lock:
            if self._staging and self._staging[0][0].is_alive():
                return self._staging[0]
            thread = threading.Thread(
                target=self._load_and_warm,
                args=(key, self._key),
                name="index-staging",
                daemon=True,
            )
            self._staging[:] = [(thread, time.monotonic())]
            thread.start()
            return self._staging[0]

    def _load_and_warm(self, key: str, loaded: str | None) -> None:
        try:
            staged = copy.copy(self)  # the same store, models and derived cache
            staged._load(key)
            for mode in sorted(self._modes):
                staged.retriever(mode).warm()
            staged.settle(hop_table=False)
        except Exception:  # the next refresh tries again; requests keep the loaded version
            log.warning("could not load index version %s", key, exc_info=True)
            return
        with self._lock:
            if self._key != loaded:  # a synchronous refresh moved on meanwhile: keep its
                return
            for name in ("dense", "lexical", "utility", "indexed", "_vocab", "links", "_key"):
                setattr(self, name, getattr(staged, name))

    def wait_staged(self, timeout: float | None = None) -> None:
        """Until a background load started by `refresh(background=True)` is done."""
        for thread, _ in list(self._staging):
            thread.join(timeout)

    def document_sizes(self) -> Counter[str]:
        """Indexed chunks of each document: how long the pages a question reaches are
        (a collection may mix long pages with short passages)."""
        return self.derived(
            "document_sizes", (), lambda: Counter(doc_id_of(c) for c in self.dense.ids)
        )

    def snapshot(self) -> Engine:
        """A view of this engine pinned to the index loaded now: the same store and models,
        and this version's dense, lexical, title and vocabulary tables even if another
        thread refreshes meanwhile. Each concurrent request retrieves through its own view,
        so it never mixes two index versions."""
        self.query_model  # noqa: B018 - load the model once here, not once per view
        with self._lock:
            return copy.copy(self)

    def derived(self, name: str, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """A structure derived from the index this engine answers from (the bridge graph,
        LiteRAG's tables), built once per index version and shared by the engine and all
        its snapshots: each request retrieves through its own snapshot, so a cache on the
        snapshot would rebuild it for every request. Keyed by the identity of the FAISS and
        BM25 objects (replaced when the corpus changes) plus `key`; the entry holds them, so
        those identities stay unique. The two newest versions of each structure are kept,
        so requests still pinned to the previous index do not rebuild it either."""
        full = self._derived_key(name, key)
        with self._derived_lock:
            found = self._derived.get(full)
            if found is not None:
                return found[0]
            building = self._building.setdefault(full, threading.Lock())
        # Built outside the shared lock: a build for a new version (seconds to minutes on a
        # large collection) must not hold up requests reading the structures they have.
        with building:
            with self._derived_lock:
                found = self._derived.get(full)
            if found is not None:
                return found[0]
            value = build()
            with self._derived_lock:
                self._derived[full] = (value, self.dense, self.lexical)
                self._building.pop(full, None)
                mine = [k for k in self._derived if k[0] == name]
                for old in mine[:-2]:
                    del self._derived[old]
            return value

    def _derived_key(self, name: str, key: tuple[Any, ...]) -> tuple[Any, ...]:
        return (name, id(self.dense), id(self.lexical), *key)

    def latest_derived(self, name: str, key: tuple[Any, ...]) -> Any:
        """The newest structure `name` with these parameters built for any index version
        (None if there is none): what a new version's structure can be derived from."""
        with self._derived_lock:
            found = [v for k, v in self._derived.items() if k[0] == name and k[3:] == key]
        return found[-1][0] if found else None

    def require_index(self) -> None:
        if len(self.dense) == 0:
            raise EmptyIndex(
                f"the {self.settings.backend} index is empty: run `neorag ingest PATH` first"
            )

    def has_token(self, token: str) -> bool:
        return token in self._vocab

    def known_tokens(self, tokens: Iterable[str]) -> set[str]:
        return {t for t in tokens if t in self._vocab}

    def doc_ids(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        return {c: doc_id_of(c) for c in chunk_ids}

    def retriever(self, mode: str) -> Retriever:
        retriever = build_retriever(mode, self)
        self._modes.add(mode)
        return retriever

    def settle(self, timeout: float = 600.0, *, hop_table: bool = True) -> None:
        """Until the copies the modes' warm-ups load in the background are ready (on a
        server: the token graph and, with `hop_table`, the hop table). Until then queries
        are answered from the server, correctly but slower, so a benchmark's warm-up
        settles before it times anything. A version staged in the background is switched
        to once its token graph is in: hops read the server until their table is copied
        (a round trip per hop, the same edges), while a token PageRank left to GDS would
        cost seconds a question at scale."""
        deadline = time.monotonic() + timeout
        with self._derived_lock:
            reads = self._derived.get(self._derived_key("hop table", ()))
        if reads is not None and hop_table:  # copied only for the modes that hop
            reads[0].wait(timeout)
        self.store.settle(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self.store.close()


def open_engine(settings: Settings) -> Engine | DatabaseEngine:
    """The engine `settings.retrieval.serving` asks for: the collection's indexes held in
    this process (`in-process`), or read from Neo4j (`database`: app/database_engine.py)."""
    if settings.retrieval.serving == "database":
        from app.database_engine import DatabaseEngine

        return DatabaseEngine(settings)
    return Engine(settings)
