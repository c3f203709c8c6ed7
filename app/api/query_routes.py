"""Questions: `/v1/retrieve`, `/v1/ask` (JSON or Server-Sent Events)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response, StreamingResponse

from app import metrics, service
from app.api.auth import require
from app.api.errors import body, classify
from app.api.models import AskRequest, RetrieveRequest
from app.api.naming import CollectionQuery, chosen
from app.service import QueryOptions
from app.settings import Settings

router = APIRouter(prefix="/v1", dependencies=[Depends(require("read"))])
VERSION_HEADER = "X-Neorag-Index-Version"


def settings_of(request: Request, collection: str | None) -> Settings:
    """The server's settings bound to `collection` (None: the server's own collection)."""
    base: Settings = request.app.state.settings
    return base if collection is None else base.for_collection(collection)


def options_of(req: RetrieveRequest) -> QueryOptions:
    return QueryOptions(mode=req.mode, top_k=req.top_k, budget=req.budget, hops=req.hops)


def limit(request: Request) -> int:
    return request.app.state.settings.question_limit


@router.post("/retrieve", summary="Rank and select context for a question (no answer)")
def retrieve(req: RetrieveRequest, request: Request, collection: CollectionQuery = None) -> Any:
    request.state.mode = req.mode
    found = request.app.state.queries.retrieve(
        settings_of(request, chosen(collection, req.collection, "body")),
        req.question,
        options_of(req),
        max_chars=limit(request),
    )
    payload = service.retrieval_payload(found)
    return json_response(payload, found.index_version)


@router.post("/ask", summary="Answer a question with citations (SSE when stream is true)")
def ask(req: AskRequest, request: Request, collection: CollectionQuery = None) -> Any:
    request.state.mode = req.mode
    settings = settings_of(request, chosen(collection, req.collection, "body"))
    queries = request.app.state.queries
    if not req.stream:
        asked = queries.ask(settings, req.question, options_of(req), max_chars=limit(request))
        metrics.count_tokens(asked.usage)
        return json_response(asked.payload(), asked.found.index_version)
    streamed = queries.ask_stream(settings, req.question, options_of(req), max_chars=limit(request))
    return StreamingResponse(
        _events(streamed),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", VERSION_HEADER: streamed.found.index_version or ""},
    )


def sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {dumps(data)}\n\n"


def _events(streamed: service.AnswerStream) -> Iterator[str]:
    """`retrieval` (the context, before any token), `token`s, then `answer` (the whole
    payload); an error after the stream began is an `error` event, not a broken pipe."""
    found = streamed.found
    yield sse(
        "retrieval",
        {
            "collection": found.collection,
            "index_version": found.index_version,
            "context": [service.chunk_dict(c) for c in found.result.context],
        },
    )
    try:
        for piece in streamed:
            yield sse("token", {"text": piece})
    except Exception as exc:
        _, kind, message = classify(exc)
        yield sse("error", body(kind, message))
        return
    assert streamed.asked is not None
    metrics.count_tokens(streamed.asked.usage)
    yield sse("answer", streamed.asked.payload())


def plain(value: object) -> object:
    """json.dumps fallback: numpy scalars as numbers, anything else as text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def dumps(data: object) -> str:
    return json.dumps(data, default=plain, ensure_ascii=False)


def json_response(payload: dict[str, Any], version: str | None) -> Response:
    return Response(
        dumps(payload), media_type="application/json", headers={VERSION_HEADER: version or ""}
    )
