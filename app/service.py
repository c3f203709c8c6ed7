"""The query layer: the functions every adapter calls to retrieve, answer, and read a
collection (the CLI, the Streamlit chat, the HTTP API and the MCP server are thin shells
around them, and none imports another).

Concurrency: an `EnginePool` holds one `Engine` per collection and is shared by every
thread of a process. Each request retrieves through `Engine.snapshot()`, a view pinned to
the index version loaded at that moment, so a refresh by another thread (a re-ingest was
published) never mixes two versions inside one answer; the one thread-unsafe component
underneath, the Hugging Face tokenizer, is behind a lock (ingest/embed.py). Threads share
the GIL, so the HTTP server scales across cores with worker processes, each with its own
pool (app/api/server.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import cypher
from app.answer import Answer, answer, generate, parse_generation, stream
from app.engine import Engine, open_engine
from app.llm import chat_model
from app.overrides import with_overrides
from app.retrieval import mode_names
from app.retrieval.base import BadQuestion, RetrievalResult
from app.runlog import recent_runs
from app.services import open_store
from app.settings import Settings
from graph.errors import NeoragError
from graph.types import ChunkView


class UnknownMode(NeoragError):
    pass


class UnknownChunk(NeoragError):
    pass


def subgraph_cypher(ids: Sequence[str]) -> str:
    """Paste into Neo4j Browser (the `:param` line first) to see exactly this subgraph."""
    literal = json.dumps(list(dict.fromkeys(ids)), ensure_ascii=False)
    return f":param ids => {literal}\n{cypher.load('retrieval_subgraph')}"


def check_question(question: object, max_chars: int | None = None) -> str:
    """The question as text, or BadQuestion saying why it cannot be asked. `max_chars`
    (the API's bound) refuses a longer one instead of truncating it."""
    if not isinstance(question, str):
        raise BadQuestion("the question must be text")
    if not question.strip():
        raise BadQuestion("the question is empty; ask something about your documents")
    if max_chars is not None and len(question) > max_chars:
        raise BadQuestion(
            f"the question has {len(question):,} characters; at most {max_chars:,} are allowed"
        )
    return question


def check_mode(mode: str) -> str:
    if mode not in mode_names():
        raise UnknownMode(f"unknown mode {mode!r}; choose one of {', '.join(mode_names())}")
    return mode


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """One request's retrieval knobs; unset ones keep the configured values."""

    mode: str = "default"
    top_k: int | None = None
    budget: int | None = None
    hops: int | None = None

    def overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.top_k is not None:
            out["retrieval.top_k"] = self.top_k
        if self.budget is not None:
            out["retrieval.spectrag.budget_tokens"] = self.budget
        if self.hops is not None:
            out["retrieval.tigrag.hops"] = self.hops
        return out


class EnginePool:
    """One Engine per collection of one backend, opened on first use and shared by the
    threads of a process. An engine that fails to open (Neo4j down) is not kept, so the
    next request tries again."""

    def __init__(self) -> None:
        self._engines: dict[tuple[str, str, str, str], Engine] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(settings: Settings) -> tuple[str, str, str, str]:
        where = settings.neo4j_uri if settings.backend == "neo4j" else str(settings.data_dir)
        return settings.backend, where, settings.collection, settings.retrieval.serving

    def engine(self, settings: Settings) -> Engine:
        key = self._key(settings)
        with self._lock:
            found = self._engines.get(key)
            if found is None:
                found = self._engines[key] = open_engine(settings)
        return found

    def view(self, settings: Settings, *, wait: bool = True) -> Engine:
        """A snapshot of the collection's engine at its newest published index (once that is
        loaded and warm, waiting at most `refresh_wait_seconds` for it, or not at all without
        `wait`: `Engine.refresh`)."""
        engine = self.engine(settings)
        engine.refresh(background=True, wait=wait)
        return engine.snapshot()

    def forget(self, settings: Settings) -> None:
        """Close and drop a collection's engine (it was deleted)."""
        with self._lock:
            engine = self._engines.pop(self._key(settings), None)
        if engine is not None:
            engine.close()

    def close(self) -> None:
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()


@dataclass(slots=True)
class Retrieved:
    """A retrieval with what answered it: the engine view and its index version. `engine`
    is None once the retrieval has left the process that made it (app/query_processes.py)."""

    result: RetrievalResult
    engine: Engine | None
    collection: str
    index_version: str | None

    def detached(self) -> Retrieved:
        """The same retrieval without its engine view (to send to another process)."""
        return Retrieved(self.result, None, self.collection, self.index_version)


def retrieve(
    pool: EnginePool,
    settings: Settings,
    question: str,
    options: QueryOptions = QueryOptions(),
    *,
    max_chars: int | None = None,
) -> Retrieved:
    check_question(question, max_chars)
    check_mode(options.mode)
    return retrieve_on(pool.view(settings), settings, question, options)


def retrieve_on(
    view: Engine, settings: Settings, question: str, options: QueryOptions
) -> Retrieved:
    """Retrieve on one engine view (a snapshot: see `Engine.snapshot`)."""
    check_mode(options.mode)
    tuned = with_overrides(settings, options.overrides())
    view.require_index()
    retriever = view.retriever(options.mode)
    retriever.cfg = tuned.retrieval  # this request's knobs; the shared settings untouched
    result = retriever.retrieve(question, top_k=options.top_k)
    return Retrieved(result, view, settings.collection, view.version)


def chunk_dict(c: ChunkView) -> dict[str, Any]:
    return {
        "chunk_id": c.id,
        "doc_id": c.doc_id,
        "title": c.title,
        "section_path": list(c.section_path),
        "source": c.source,
        "community": c.community,
        "n_tokens": c.n_tokens,
        "text": c.text,
    }


def retrieval_payload(found: Retrieved) -> dict[str, Any]:
    """What `/v1/retrieve` and the MCP `search` tool return."""
    result = found.result
    return {
        "question": result.question,
        "mode": result.mode,
        "collection": found.collection,
        "index_version": found.index_version,
        "ranking": [
            {
                "chunk_id": s.chunk_id,
                "doc_id": result.doc_of.get(s.chunk_id, ""),
                "score": round(s.score, 6),
                "signals": s.signals,
            }
            for s in result.ranking[: max(len(result.context), 10)]
        ],
        "context": [chunk_dict(c) for c in result.context],
        "chains": result.chains,
        "cypher": subgraph_cypher([c.id for c in result.context]),
        "context_tokens": result.context_tokens,
        "trace": result.trace.as_dict(),
    }


def result_payload(result: RetrievalResult, ans: Answer) -> dict[str, Any]:
    """The JSON shape `ask --json` prints, the UI keeps per message and `/v1/ask` returns."""
    signals = {s.chunk_id: s for s in result.ranking}
    return {
        "question": result.question,
        "mode": result.mode,
        "answer": ans.as_dict(),
        "citations": [
            {
                "n": n,
                "chunk_id": c.id,
                "doc_id": c.doc_id,
                "title": c.title,
                "section_path": list(c.section_path),
                "source": c.source,
                "community": c.community,
                "score": round(signals[c.id].score, 6) if c.id in signals else None,
                "signals": signals[c.id].signals if c.id in signals else {},
                "text": c.text,
            }
            for n, c in enumerate(result.context, start=1)
        ],
        "chains": result.chains,
        "cypher": subgraph_cypher([c.id for c in result.context]),
        "context_tokens": result.context_tokens,
        "trace": result.trace.as_dict(),
    }


@dataclass(slots=True)
class Asked:
    """An answered question: the retrieval, the answer, the chat model's token usage."""

    found: Retrieved
    answer: Answer
    usage: dict[str, int] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        out = result_payload(self.found.result, self.answer)
        out["collection"] = self.found.collection
        out["index_version"] = self.found.index_version
        out["usage"] = self.usage
        return out

    def detached(self) -> Asked:
        return Asked(self.found.detached(), self.answer, self.usage)


def ask(
    pool: EnginePool,
    settings: Settings,
    question: str,
    options: QueryOptions = QueryOptions(),
    *,
    max_chars: int | None = None,
) -> Asked:
    found = retrieve(pool, settings, question, options, max_chars=max_chars)
    return answer_retrieved(found, settings)


def answer_retrieved(found: Retrieved, settings: Settings) -> Asked:
    """The answer to a retrieval: the chat model's when one is configured, else the offline
    reader's (which needs the engine view the retrieval came from)."""
    model = chat_model(settings)
    if model is not None and found.result.context:
        ans = generate(model, found.result)
    else:
        if found.engine is None and found.result.context:
            raise ValueError("an extractive answer needs the retrieval's engine view")
        ans = answer(found.engine, found.result, None)  # type: ignore[arg-type]
    return Asked(found, ans, dict(ans.usage))


@dataclass(slots=True)
class AnswerStream:
    """An answer as it is produced: iterate for text pieces, then read `asked`. With a chat
    model the pieces are its tokens; the extractive answer arrives as one piece (given as
    `asked` when it was made elsewhere: a query process)."""

    found: Retrieved
    settings: Settings
    asked: Asked | None = None

    def __iter__(self) -> Iterator[str]:
        if self.asked is not None:
            yield self.asked.answer.text
            return
        model = chat_model(self.settings)
        result = self.found.result
        if model is None or not result.context:
            self.asked = answer_retrieved(self.found, self.settings)
            yield self.asked.answer.text
            return
        usage: dict[str, int] = {}
        pieces: list[str] = []
        for piece in stream(model, result, usage):
            pieces.append(piece)
            yield piece
        ans = parse_generation("".join(pieces), len(result.context))
        ans.usage = usage
        self.asked = Asked(self.found, ans, usage)


def ask_stream(
    pool: EnginePool,
    settings: Settings,
    question: str,
    options: QueryOptions = QueryOptions(),
    *,
    max_chars: int | None = None,
) -> AnswerStream:
    """Retrieve now (errors raise here, before any byte is sent), answer while iterating."""
    return AnswerStream(retrieve(pool, settings, question, options, max_chars=max_chars), settings)


def status(settings: Settings) -> dict[str, Any]:
    """The shape of `neorag status --json`: counts, graph version, the analytics'
    staleness, recent ingest runs."""
    from ingest.analytics_refresh import staleness

    with open_store(settings) as store:
        st = {"collection": settings.collection, **store.status().as_dict()}
        analytics = staleness(store)
    return {**st, "analytics": analytics, "runs": recent_runs(settings)}


def documents(settings: Settings) -> list[dict[str, str]]:
    with open_store(settings) as store:
        docs = sorted(store.documents().values(), key=lambda d: d.id)
    return [{"id": d.id, "title": d.title, "source": d.source} for d in docs]


def readiness(pool: EnginePool, settings: Settings) -> dict[str, Any]:
    """The published index a question is answered from now (raises when there is none, or
    the store cannot be reached). A probe never waits for a newly published version to load:
    it reports the version being answered from until the switch."""
    view = pool.view(settings, wait=False)
    view.require_index()
    return {"index_version": view.version, "chunks": len(view.dense)}


WARM_UP_QUESTION = "What does this collection say about its main subject?"


def warm(pool: EnginePool, settings: Settings) -> None:
    """Open the collection, load the query model and answer one question through the
    default mode and the offline reader, so the first real question runs at the steady
    speed: what the mode derives (token and bridge graphs), the reader's spaCy model and
    every lazily imported library are loaded here, before /readyz says ready. An empty
    collection warms only the model (there is nothing to answer from)."""
    warm_engine(pool.view(settings), settings)


def warm_engine(view: Engine, settings: Settings) -> None:
    """`warm` on one engine view (the chat warms its engine in the background with it)."""
    view.encode_queries(["warm up"])
    if len(view.dense) == 0:
        return
    view.retriever("default").warm()
    found = retrieve_on(view, settings, WARM_UP_QUESTION, QueryOptions())
    if chat_model(settings) is None:  # a chat model is a server of its own: not called here
        answer_retrieved(found, settings)


def get_chunk(pool: EnginePool, settings: Settings, chunk_id: str) -> dict[str, Any]:
    """One stored chunk by id (as a ranking or citation names it)."""
    found = pool.engine(settings).store.get_chunks([chunk_id])
    if not found:
        raise UnknownChunk(f"no chunk {chunk_id!r} in collection {settings.collection!r}")
    return chunk_dict(found[0])


def cited_sources(payload: dict[str, Any]) -> str:
    """The answer's cited passages as lines `[n] title — doc id` (chat replies end with
    them, so a client that shows only text still shows where the answer came from)."""
    cited = set(payload["answer"]["citations"]) or {c["n"] for c in payload["citations"]}
    lines = [
        f"[{c['n']}] {c['title'] or c['doc_id']} — {c['doc_id']}"
        for c in payload["citations"]
        if c["n"] in cited
    ]
    return "Sources:\n" + "\n".join(lines) if lines else ""
