"""API keys: `NEORAG_API__KEYS=key[:scope],…`, scopes read < ingest < admin.

With no keys configured every route is open (the default bind is 127.0.0.1). With keys,
each /v1 route and /mcp require `Authorization: Bearer <key>` of at least the route's
scope: 401 without a known key, 403 with too small a scope. Keys are compared in constant
time and never appear in a message, a log line or a metric label.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence

from fastapi import Request

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


def check(keys: Sequence[ApiKey], header: str | None, scope: str) -> None:
    if not keys:
        return
    key = key_of(header, keys)
    if key is None:
        raise ApiError(
            401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>"
        )
    if not key.allows(scope):
        raise ApiError(
            403, "forbidden", f"this key's scope is {key.scope!r}; the route needs {scope!r}"
        )


def require(scope: str) -> Callable[[Request], None]:
    """A route dependency: the request's key must have at least `scope`."""

    def dependency(request: Request) -> None:
        check(request.app.state.keys, request.headers.get("authorization"), scope)

    return dependency
