"""API keys: `NEORAG_API__KEYS=key[:scope],…`, scopes read < ingest < admin.

With no keys configured every route is open (the default bind is 127.0.0.1). With keys,
each /v1 route and /mcp require `Authorization: Bearer <key>`: 401 without a known key,
403 when the key's scope is too small for the capability the route (or MCP tool)
exercises; app/access.py is the one table of which scope each capability needs. Keys are
compared in constant time and never appear in a message, a log line or a metric label.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence

from fastapi import Request

from app import access
from app.api.errors import ApiError
from app.settings import ApiKey


def key_of(header: str | None, keys: Sequence[ApiKey]) -> ApiKey | None:
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    given = token.strip().encode()
    found = None
    for key in keys:  # every key compared, so timing says nothing about which matched
        if hmac.compare_digest(given, key.secret.encode()):
            found = key
    return found


def scope_of(keys: Sequence[ApiKey], header: str | None) -> str:
    """The caller's scope: its key's, or full rights when no keys are configured; 401
    when keys are configured and the request has no valid one."""
    if not keys:
        return access.FULL
    key = key_of(header, keys)
    if key is None:
        raise ApiError(
            401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>"
        )
    return key.scope


def check(keys: Sequence[ApiKey], header: str | None, capability: str) -> None:
    scope = scope_of(keys, header)
    if not access.allows(scope, capability):
        raise ApiError(403, "forbidden", access.refusal(scope, capability, "the route"))


def require(capability: str) -> Callable[[Request], None]:
    """A route dependency: the request's key must grant `capability` (app/access.py)."""
    access.required(capability)  # an unknown capability fails at import, not per request

    def dependency(request: Request) -> None:
        check(request.app.state.keys, request.headers.get("authorization"), capability)

    return dependency
