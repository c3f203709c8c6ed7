"""`ProcessQueries`: a server's questions answered by a pool of query processes.

Each query process holds its own `EnginePool` (its engines refresh to a newly published
index on their own, as any engine does) and runs one question at a time; the server
process keeps the HTTP connections and hands each question to the next free process, in
arrival order (app/queries.py says why). What crosses the process boundary is plain data:
settings and options in, the retrieval and the answer out (without their engine view).
An error a question raises there is raised here, with its own type, so the adapters map
it to the same HTTP status as before. With a chat model configured, the query process
only retrieves: generation waits on the model's server, so it runs here and never holds a
core a question could use.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from app.llm import chat_model
from app.queries import LocalQueries, Queries
from app.service import AnswerStream, Asked, QueryOptions, Retrieved, answer_retrieved
from app.settings import Settings
from graph.errors import BackendUnavailable
from ingest import threads

log = logging.getLogger("neorag.api")
_LOCAL: LocalQueries | None = None  # the query process's own questions


class QueryProcessLost(BackendUnavailable):
    """A query process ended while it answered (killed, out of memory)."""


def _start(budget: int, settings: Settings) -> None:
    """A query process's first act: its thread budget, its engines, a warm model."""
    global _LOCAL
    threads.limit(budget)
    _LOCAL = LocalQueries()
    try:
        _LOCAL.warm(settings)
    except Exception as exc:  # readiness reports it; the next question tries again
        log.warning("query process %d could not warm up: %s", os.getpid(), exc)


def _pid() -> int:
    return os.getpid()


def _call(method: str, *args: Any, **kwargs: Any) -> Any:
    assert _LOCAL is not None, "query process not started"
    out = getattr(_LOCAL, method)(*args, **kwargs)
    return out.detached() if isinstance(out, (Retrieved, Asked)) else out


class ProcessQueries(Queries):
    """`processes` query processes, each within `budget` compute threads."""

    def __init__(self, settings: Settings, processes: int, budget: int | None = None) -> None:
        self.settings = settings
        self.processes = processes
        self.budget = budget or settings.api.compute_threads or threads.share(processes)
        self._lock = threading.Lock()
        self._executor, self._started = self._launch()

    def _launch(self) -> tuple[ProcessPoolExecutor, list[Future[int]]]:
        executor = ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),  # no fork of a threaded server
            initializer=_start,
            initargs=(self.budget, self.settings),
        )
        # The pool starts a process per task while none is idle: start them all now, so
        # the first questions do not wait for a model to load.
        return executor, [executor.submit(_pid) for _ in range(self.processes)]

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        executor = self._executor
        try:
            return executor.submit(_call, method, *args, **kwargs).result()
        except BrokenProcessPool:
            with self._lock:
                if self._executor is executor:
                    log.error("a query process ended unexpectedly; starting new ones")
                    self._executor, self._started = self._launch()
            raise QueryProcessLost(
                "a query process stopped while answering (out of memory?); the server "
                "started new ones: retry"
            ) from None

    def retrieve(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Retrieved:
        return self._run("retrieve", settings, question, options, max_chars=max_chars)

    def ask(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Asked:
        if chat_model(settings) is None:
            return self._run("ask", settings, question, options, max_chars=max_chars)
        return answer_retrieved(self.retrieve(settings, question, options, max_chars=max_chars),
                                settings)  # fmt: skip

    def ask_stream(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> AnswerStream:
        if chat_model(settings) is None:
            asked = self.ask(settings, question, options, max_chars=max_chars)
            return AnswerStream(asked.found, settings, asked)
        return AnswerStream(self.retrieve(settings, question, options, max_chars=max_chars),
                            settings)  # fmt: skip

    def get_chunk(self, settings: Settings, chunk_id: str) -> dict[str, Any]:
        return self._run("get_chunk", settings, chunk_id)  # type: ignore[no-any-return]

    def readiness(self, settings: Settings) -> dict[str, Any]:
        return self._run("readiness", settings)  # type: ignore[no-any-return]

    def warm(self, settings: Settings) -> None:
        """Until the query processes have started (each warms the server's collection)."""
        for started in list(self._started):
            started.result()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
