"""Where a server's questions run: `Queries` is what the HTTP API and the MCP server call.

`LocalQueries` runs them in the calling process, on one `EnginePool` shared by its threads
(the MCP stdio server, the HTTP app under test). `ProcessQueries` (app/query_processes.py)
runs them in a pool of query processes behind one first-come, first-served queue, which is
what `neorag api` serves with: retrieval is GIL-bound Python, so a process uses one core,
and one queue in front of N processes hands every request the next free core, where
uvicorn's own worker processes would pin each keep-alive connection to whichever worker
accepted it (16 clients split 9/7 in one measured run, so the busier worker's clients
waited longer for the same work).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from app import service
from app.service import AnswerStream, Asked, EnginePool, QueryOptions, Retrieved
from app.settings import Settings


class Queries(ABC):
    """The service layer's query functions, bound to where they run."""

    @abstractmethod
    def retrieve(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Retrieved: ...

    @abstractmethod
    def ask(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Asked: ...

    @abstractmethod
    def ask_stream(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> AnswerStream:
        """Retrieval happens now (its errors raise here, before a byte is sent)."""

    @abstractmethod
    def get_chunk(self, settings: Settings, chunk_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def readiness(self, settings: Settings) -> dict[str, Any]: ...

    @abstractmethod
    def warm(self, settings: Settings) -> None: ...

    @abstractmethod
    def close(self) -> None: ...


class LocalQueries(Queries):
    """Questions answered in this process."""

    def __init__(self, pool: EnginePool | None = None) -> None:
        self.pool = pool or EnginePool()

    def retrieve(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Retrieved:
        return service.retrieve(self.pool, settings, question, options, max_chars=max_chars)

    def ask(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> Asked:
        return service.ask(self.pool, settings, question, options, max_chars=max_chars)

    def ask_stream(
        self, settings: Settings, question: str, options: QueryOptions, *, max_chars: int | None
    ) -> AnswerStream:
        return service.ask_stream(self.pool, settings, question, options, max_chars=max_chars)

    def get_chunk(self, settings: Settings, chunk_id: str) -> dict[str, Any]:
        return service.get_chunk(self.pool, settings, chunk_id)

    def readiness(self, settings: Settings) -> dict[str, Any]:
        return service.readiness(self.pool, settings)

    def warm(self, settings: Settings) -> None:
        service.warm(self.pool, settings)

    def close(self) -> None:
        self.pool.close()
