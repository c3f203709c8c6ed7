"""The OpenAI Chat Completions API: `POST /v1/chat/completions`, `GET /v1/models`.

`model` names a retrieval mode; the last user message is the question (earlier turns are
not retrieval input: each answer stands on its own evidence); the reply is the answer
followed by its cited sources, so a client that shows only text still shows where the
answer came from. The full citations ride along in a `neorag` field that OpenAI clients
ignore. Streaming follows the same wire format as OpenAI's (`chat.completion.chunk`
events, then `data: [DONE]`), with a usage chunk when `stream_options.include_usage`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from app import metrics, service
from app.api.auth import require
from app.api.errors import ApiError, body, classify
from app.api.models import ChatRequest
from app.api.naming import CollectionQuery, chosen, takes_none
from app.api.query_routes import VERSION_HEADER, dumps, json_response, limit, settings_of
from app.retrieval import mode_names
from app.service import QueryOptions

router = APIRouter(prefix="/v1", dependencies=[Depends(require("read"))])
ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


@router.get(
    "/models", dependencies=[Depends(takes_none)], summary="Retrieval modes, as OpenAI models"
)
def models() -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": 0, "owned_by": "neorag"} for m in mode_names()
        ],
    }


def _question(req: ChatRequest) -> str:
    for message in reversed(req.messages):
        if message.role == "user":
            return message.text()
    raise ApiError(400, "invalid_request", "messages has no user message to answer")


def _extension(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "collection": payload["collection"],
        "index_version": payload["index_version"],
        "mode": payload["mode"],
        "answer": payload["answer"],
        "citations": [{k: v for k, v in c.items() if k != "text"} for c in payload["citations"]],
    }


def _reply(answer_text: str, payload: dict[str, Any]) -> str:
    sources = service.cited_sources(payload)
    return f"{answer_text}\n\n{sources}" if sources else answer_text


def _usage(usage: dict[str, int]) -> dict[str, int]:
    return {**ZERO_USAGE, **usage}


@router.post("/chat/completions", summary="OpenAI-compatible chat (model = retrieval mode)")
def chat_completions(req: ChatRequest, request: Request, collection: CollectionQuery = None) -> Any:
    request.state.mode = req.model
    settings = settings_of(request, chosen(collection, req.collection, "body"))
    options = QueryOptions(mode=req.model, top_k=req.top_k)
    queries = request.app.state.queries
    question = _question(req)
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": req.model}
    if not req.stream:
        asked = queries.ask(settings, question, options, max_chars=limit(request))
        metrics.count_tokens(asked.usage)
        payload = asked.payload()
        message = {"role": "assistant", "content": _reply(asked.answer.text, payload)}
        return json_response(
            head
            | {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": _usage(asked.usage),
                "neorag": _extension(payload),
            },
            asked.found.index_version,
        )
    streamed = queries.ask_stream(settings, question, options, max_chars=limit(request))
    include_usage = bool((req.stream_options or {}).get("include_usage"))
    return StreamingResponse(
        _chunks(streamed, head, include_usage),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", VERSION_HEADER: streamed.found.index_version or ""},
    )


def _chunks(
    streamed: service.AnswerStream, head: dict[str, Any], include_usage: bool
) -> Iterator[str]:
    base = head | {"object": "chat.completion.chunk"}

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {dumps(base | {'choices': [choice]} | extra)}\n\n"

    yield event({"role": "assistant", "content": ""})
    try:
        for piece in streamed:
            yield event({"content": piece})
    except Exception as exc:
        _, kind, message = classify(exc)
        yield f"data: {dumps(body(kind, message))}\n\n"
        yield "data: [DONE]\n\n"
        return
    asked = streamed.asked
    assert asked is not None
    metrics.count_tokens(asked.usage)
    payload = asked.payload()
    sources = service.cited_sources(payload)
    if sources:
        yield event({"content": f"\n\n{sources}"})
    yield event({}, "stop", neorag=_extension(payload))
    if include_usage:
        yield f"data: {dumps(base | {'choices': [], 'usage': _usage(asked.usage)})}\n\n"
    yield "data: [DONE]\n\n"
