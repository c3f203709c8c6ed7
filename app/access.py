"""The one scope model: which API key scope each capability needs, over HTTP and MCP alike.

Every /v1 route and every MCP tool names the capability it exercises; this table alone says
which scope that takes, so `/v1/cypher` and the MCP `cypher` tool can never drift apart
again. Scopes are ordered (app/settings.py `SCOPES`): a key holds its scope and every one
before it.

Who holds which scope: with `NEORAG_API__KEYS` set, the caller's key; with no keys, every
HTTP caller holds `admin` (the server is open, as it always was); over stdio MCP
(`neorag mcp`) the caller is the local user who started the process with their own
settings and files, so it holds `admin` too, whatever `NEORAG_API__KEYS` says.
"""

from __future__ import annotations

from typing import Literal

from app.settings import SCOPES

Capability = Literal["read", "ingest", "cypher", "admin"]

# capability -> the smallest scope that grants it
REQUIRED: dict[str, str] = {
    "read": "read",  # questions, chunks, documents, status, collections, jobs, models
    "ingest": "ingest",  # uploads, ingests, deletions (background jobs that write)
    "cypher": "admin",  # ad-hoc read-only Cypher: sees every collection and every property
    "admin": "admin",  # reserved for administration; no route needs more than cypher today
}
FULL = SCOPES[-1]  # the scope of an open server's callers and of the stdio user
# The ASGI scope key in which the /mcp guard hands the caller's scope to the MCP tools.
CALLER_SCOPE = "neorag.caller_scope"


def required(capability: str) -> str:
    return REQUIRED[capability]


def allows(scope: str, capability: str) -> bool:
    """Whether a caller holding `scope` may exercise `capability`."""
    return SCOPES.index(scope) >= SCOPES.index(REQUIRED[capability])


def refusal(scope: str, capability: str, what: str) -> str:
    """The one-line 403 reason, the same words over HTTP and MCP (never the key)."""
    return f"this key's scope is {scope!r}; {what} needs {required(capability)!r}"
