"""Every error as `{"error": {"type", "message"}}` with a 4xx/5xx status, never a traceback.

NeoragError subclasses already carry the one-line message the CLI prints; this table only
chooses the status code and a stable `type` for clients to branch on.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from app.ingest_service import OutsideRoots
from app.jobs import UnknownJob
from app.retrieval.base import BadQuestion
from app.service import UnknownChunk, UnknownMode
from app.uploads import UnsupportedUpload
from graph.collections import InvalidCollection
from graph.errors import (
    BackendAuthError,
    BackendUnavailable,
    CypherNotSupported,
    EmptyIndex,
    GdsMissing,
    LegacyStore,
    LockedError,
    NeoragError,
    ParameterMissing,
    StatementTimeout,
    UnknownCollection,
    WriteRefused,
)
from ingest.runner import UnknownDocument

log = logging.getLogger("neorag.api")

# First match wins: subclasses before their bases.
STATUS: list[tuple[type[Exception], int, str]] = [
    (BadQuestion, 400, "invalid_question"),
    (UnknownMode, 400, "unknown_mode"),
    (InvalidCollection, 400, "invalid_collection"),
    (UnknownCollection, 404, "unknown_collection"),
    (UnknownChunk, 404, "not_found"),
    (UnknownDocument, 404, "not_found"),
    (UnknownJob, 404, "not_found"),
    (OutsideRoots, 403, "path_not_allowed"),
    (WriteRefused, 403, "statement_refused"),
    (ParameterMissing, 400, "invalid_request"),
    (CypherNotSupported, 400, "not_supported"),
    (StatementTimeout, 504, "timeout"),
    (UnsupportedUpload, 415, "unsupported_type"),
    (LockedError, 409, "locked"),
    (EmptyIndex, 409, "empty_index"),
    (LegacyStore, 409, "legacy_index"),
    (GdsMissing, 503, "backend_unavailable"),
    (BackendAuthError, 503, "backend_unavailable"),
    (BackendUnavailable, 503, "backend_unavailable"),
    (NeoragError, 400, "invalid_request"),
]


class ApiError(Exception):
    """An error the HTTP layer itself raises (auth, upload size, request shape)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def body(kind: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"type": kind, "message": message}}


def classify(exc: Exception) -> tuple[int, str, str]:
    if isinstance(exc, ApiError):
        return exc.status, exc.kind, exc.message
    for cls, status, kind in STATUS:
        if isinstance(exc, cls):
            return status, kind, str(exc).splitlines()[0] if str(exc) else kind
    return 500, "internal", "internal error; the server log has the details"


def _validation_message(exc: RequestValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    if first.get("type") == "extra_forbidden":  # never silently dropped (docs/api.md)
        return f"{where}: not a field this route reads"
    return f"{where}: {first.get('msg', 'invalid value')}"


def install(app: FastAPI) -> None:
    async def neorag_error(request: Request, exc: Exception) -> JSONResponse:
        status, kind, message = classify(exc)
        if status == 500:
            log.exception("unexpected error on %s", request.url.path, exc_info=exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return JSONResponse(body(kind, message), status_code=status, headers=headers)

    async def validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return JSONResponse(body("invalid_request", _validation_message(exc)), status_code=422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(body(kind, str(exc.detail)), status_code=exc.status_code)

    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(ApiError, neorag_error)
    app.add_exception_handler(NeoragError, neorag_error)
    app.add_exception_handler(InvalidCollection, neorag_error)
    app.add_exception_handler(Exception, neorag_error)
