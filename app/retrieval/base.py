"""The retriever template: `retrieve()` validates the question, times and traces every step,
and hands each mode a small `_retrieve` to implement.

Outputs are typed so fusion, selection, answering, the UI and the evaluation harness all
read the same fields: a ranking of `ScoredChunk`s with per-signal scores, the selected
context, and a `Trace` of what happened.

Retrievers read the index through `RetrievalContext`, the few things they need of the
engine, never the `Engine` class itself: the engine builds retrievers, so a retriever that
imported it back would tie the two into one circle (neither could be read or tested alone).
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from graph.errors import NeoragError
from graph.types import ChunkView

if TYPE_CHECKING:
    from pathlib import Path

    from app.retrieval.links import TitleLinks
    from app.settings import Settings
    from graph.base import GraphStore
    from graph.dense import DenseIndex
    from graph.lexical import LexicalIndex
    from ingest.query_model import QueryModel
    from ingest.tokens import Analyzer

T = TypeVar("T")


class RetrievalContext(Protocol):
    """What the retrieval modes read from the engine they answer through (`app.engine.Engine`
    is one; a snapshot of it is another): the store, the published index of one version and
    the query-side models, plus a cache for structures derived from that version."""

    settings: Settings
    store: GraphStore
    analyzer: Analyzer
    dense: DenseIndex
    lexical: LexicalIndex
    utility: LexicalIndex
    links: TitleLinks
    indexed: frozenset[str]
    in_process: bool  # the search indexes are held here, not read from the database

    @property
    def query_model(self) -> QueryModel: ...

    @property
    def version(self) -> str | None: ...

    @property
    def index_folder(self) -> Path: ...

    def encode_queries(self, texts: list[str], *, int8: bool = False) -> np.ndarray: ...

    def has_token(self, token: str) -> bool: ...

    def known_tokens(self, tokens: Iterable[str]) -> set[str]: ...

    def doc_ids(self, chunk_ids: Iterable[str]) -> dict[str, str]: ...

    def document_sizes(self) -> Counter[str]: ...

    def derived(self, name: str, key: tuple[Any, ...], build: Callable[[], T]) -> T: ...

    def latest_derived(self, name: str, key: tuple[Any, ...]) -> Any: ...


class BadQuestion(NeoragError):
    """A question that cannot be answered as asked (empty, say); the message says why."""


@dataclass(slots=True)
class ScoredChunk:
    chunk_id: str
    score: float
    signals: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class TraceStep:
    name: str
    ms: float
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Trace:
    mode: str
    question: str
    steps: list[TraceStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    expanded_tokens: dict[str, float] = field(default_factory=dict)
    candidates: int = 0
    pool: int = 0
    hops: list[dict[str, Any]] = field(default_factory=list)
    tokens_used: int = 0
    budget: int | None = None
    total_ms: float = 0.0

    @contextmanager
    def step(self, name: str, **details: Any) -> Iterator[dict[str, Any]]:
        t0 = time.perf_counter()
        info = dict(details)
        try:
            yield info
        finally:
            self.steps.append(TraceStep(name, round((time.perf_counter() - t0) * 1000, 2), info))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def part(self) -> Trace:
        """A trace for one part of a fused mode that runs beside the others."""
        return Trace(mode=self.mode, question=self.question)

    def absorb(self, part: Trace) -> None:
        """Add a part's trace, as if the part had run here after the parts absorbed
        before it: its steps, notes and hops follow theirs, its figures replace theirs."""
        self.steps.extend(part.steps)
        self.notes.extend(part.notes)
        self.hops.extend(part.hops)
        if part.expanded_tokens:
            self.expanded_tokens = part.expanded_tokens
        self.candidates = part.candidates or self.candidates
        self.pool = part.pool or self.pool


@dataclass(slots=True)
class Query:
    """A validated question with its analyses, computed once and shared by every signal."""

    text: str
    tokens: list[str]
    engine: RetrievalContext
    _embedding: np.ndarray | None = None
    _embedding_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def embedding(self) -> np.ndarray:
        """Encoded once, by whichever of the parts running at once asks first."""
        if self._embedding is None:
            with self._embedding_lock:
                if self._embedding is None:
                    self._embedding = self.engine.encode_queries([self.text])[0]
        return self._embedding


@dataclass(slots=True)
class RetrievalResult:
    question: str
    mode: str
    ranking: list[ScoredChunk]
    context: list[ChunkView]
    trace: Trace
    doc_of: dict[str, str] = field(default_factory=dict)
    chains: list[str] = field(default_factory=list)

    @property
    def context_tokens(self) -> int:
        return sum(c.n_tokens for c in self.context)

    def doc_ranking(self) -> list[str]:
        """Document ids in ranking order, first occurrence kept (for recall@k)."""
        return list(dict.fromkeys(self.doc_of.get(s.chunk_id, s.chunk_id) for s in self.ranking))


_SPACE = re.compile(r"\s+")


class Retriever(ABC):
    """Subclasses set `name` and implement `_retrieve`; everything else is shared."""

    name: str = ""

    def __init__(self, engine: RetrievalContext) -> None:
        self.engine = engine
        self.cfg = engine.settings.retrieval

    def retrieve(self, question: str, *, top_k: int | None = None) -> RetrievalResult:
        t0 = time.perf_counter()
        trace = Trace(mode=self.name, question=question)
        query = self._validate(question, trace)
        k = top_k or self.default_k()
        if not query.tokens and not query.text:
            ranking: list[ScoredChunk] = []
        else:
            # Only chunks of the published index: during a re-ingest the store may already
            # hold some new documents; they appear once the ingest publishes them.
            indexed = self.engine.indexed
            ranking = [s for s in self._retrieve(query, trace, k) if s.chunk_id in indexed]
        with trace.step("fetch context"):
            context = self._select(query, ranking, trace, k)
        trace.tokens_used = sum(c.n_tokens for c in context)
        trace.total_ms = round((time.perf_counter() - t0) * 1000, 2)
        doc_of = {c.id: c.doc_id for c in context}
        doc_of.update(self.engine.doc_ids(s.chunk_id for s in ranking if s.chunk_id not in doc_of))
        result = RetrievalResult(question, self.name, ranking, context, trace, doc_of=doc_of)
        self._finish(query, result)
        return result

    def warm(self) -> None:
        """Build what this mode derives from the engine's index (graphs, tables) ahead of
        the first question, so a newly published index is switched to only once it is
        ready (`Engine.refresh(background=True)`). Modes that derive nothing keep this."""
        return None

    def default_k(self) -> int:
        """How many chunks of context the mode gives when the caller does not say."""
        return self.cfg.top_k

    def _validate(self, question: str, trace: Trace) -> Query:
        if not isinstance(question, str):
            raise BadQuestion("the question must be text")
        text = _SPACE.sub(" ", question).strip()
        if not text:
            raise BadQuestion("the question is empty; ask something about your documents")
        limit = self.cfg.max_question_chars
        if len(text) > limit:
            trace.notes.append(f"question truncated from {len(text)} to {limit} characters")
            text = text[:limit]
        tokens = self.engine.analyzer.tokens(text)
        if not tokens:
            trace.notes.append(
                "the question has no searchable words (only stopwords or very short words); "
                "using its meaning only"
            )
        held = self.engine.known_tokens(tokens)
        known = [t for t in dict.fromkeys(tokens) if t in held]
        if tokens and not known:
            trace.notes.append("none of the question's words occur in the indexed documents")
        trace.seeds = known
        return Query(text=text, tokens=tokens, engine=self.engine)

    def _select(
        self, query: Query, ranking: list[ScoredChunk], trace: Trace, k: int
    ) -> list[ChunkView]:
        """Default context: the top k chunks. Budgeted modes override this."""
        return self.engine.store.get_chunks([s.chunk_id for s in ranking[:k]])

    def _finish(self, query: Query, result: RetrievalResult) -> None:
        """Hook for modes that add to the result (reasoning chains)."""
        return None

    @abstractmethod
    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        """The full ranking, best first (longer than k: evaluation reads R@10)."""
