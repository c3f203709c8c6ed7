"""One scope model: every /v1 route and every MCP tool (over the mounted /mcp, through the
official SDK client) called with no key, a wrong key and a key of each scope on one keyed
server. The scope each one needs is written here by hand, so the test checks
app/access.py instead of repeating it; a route or tool missing from these tables fails.

Calls that pass the key check are built to stop before they write: an ingest path outside
the roots (403 path_not_allowed), an unknown document (404), an upload over the size cap
(413), Cypher on the embedded backend (400 not_supported). Any of those proves the key was
let through, and the shared index stays as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from app.mcp_server import TOOLS
from app.settings import SCOPES, Settings
from tests.app.api.conftest import LiveServer, live_server, wait_ready
from tests.app.api.test_auth import ADMIN, INGEST, READ, bearer, with_keys
from tests.app.test_streamlit_app import QUESTION

KEYS = {"read": READ, "ingest": INGEST, "admin": ADMIN}
CHAT = {"messages": [{"role": "user", "content": QUESTION}]}
# method, path, request kwargs, the scope it needs, the status once the key is let through
ROUTES: list[tuple[str, str, dict[str, Any], str, int]] = [
    ("POST", "/v1/retrieve", {"json": {"question": QUESTION}}, "read", 200),
    ("POST", "/v1/ask", {"json": {"question": QUESTION}}, "read", 200),
    ("POST", "/v1/chat/completions", {"json": CHAT}, "read", 200),
    ("GET", "/v1/models", {}, "read", 200),
    ("GET", "/v1/collections", {}, "read", 200),
    ("GET", "/v1/status", {}, "read", 200),
    ("GET", "/v1/documents", {}, "read", 200),
    ("GET", "/v1/chunks/{chunk_id}", {}, "read", 200),
    ("GET", "/v1/jobs", {}, "read", 200),
    ("GET", "/v1/jobs/{job_id}", {}, "read", 404),
    ("POST", "/v1/documents", {"files": {"files": ("big.md", b"# big\n" * 400)}}, "ingest", 413),
    ("DELETE", "/v1/documents/{doc_id}", {}, "ingest", 404),
    ("POST", "/v1/ingest", {"json": {"path": "/etc"}}, "ingest", 403),
    ("POST", "/v1/cypher", {"json": {"statement": "RETURN 1"}}, "admin", 400),
]
TOOL_NEEDS = {"search": "read", "ask": "read", "get_chunk": "read", "status": "read"}
TOOL_NEEDS["cypher"] = "admin"


def grants(scope: str, needs: str) -> bool:
    return SCOPES.index(scope) >= SCOPES.index(needs)


@pytest.fixture(scope="module")
def keyed(index_settings: Settings) -> Iterator[LiveServer]:
    settings = with_keys(index_settings, f"{READ}:read,{INGEST}:ingest,{ADMIN}")
    settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"max_upload_bytes": 1024})}
    )
    from app.api.server import create_app

    with live_server(create_app(settings)) as live:
        wait_ready(live.url)
        yield live


@pytest.fixture(scope="module")
def chunk_id(keyed: LiveServer) -> str:
    found = httpx.post(
        f"{keyed.url}/v1/retrieve", json={"question": QUESTION}, headers=bearer(READ), timeout=120
    )
    return str(found.json()["context"][0]["chunk_id"])


def concrete(path: str, chunk_id: str) -> str:
    return (
        path.replace("{chunk_id}", chunk_id.replace("#", "%23"))
        .replace("{job_id}", "0123456789abcdef")
        .replace("{doc_id}", "default:nowhere.md")
    )


def test_the_tables_cover_every_route_and_tool(keyed: LiveServer) -> None:
    paths = keyed.app.openapi()["paths"]
    served = {(m.upper(), p) for p, item in paths.items() if p.startswith("/v1/") for m in item}
    assert served == {(method, path) for method, path, *_ in ROUTES}
    assert TOOLS.keys() == TOOL_NEEDS.keys()


def test_every_route_with_every_scope_and_none(keyed: LiveServer, chunk_id: str) -> None:
    with httpx.Client(base_url=keyed.url, timeout=120) as http:
        for method, template, kwargs, needs, allowed in ROUTES:
            path = concrete(template, chunk_id)
            for headers in ({}, bearer("wrong-key-000000")):
                r = http.request(method, path, headers=headers, **kwargs)
                assert r.status_code == 401, (method, path, r.text)
                assert r.json()["error"]["type"] == "unauthorized"
            for scope, key in KEYS.items():
                r = http.request(method, path, headers=bearer(key), **kwargs)
                if grants(scope, needs):
                    assert r.status_code == allowed, (method, path, scope, r.text)
                    if r.status_code >= 400:
                        assert r.json()["error"]["type"] not in {"unauthorized", "forbidden"}
                else:
                    assert r.status_code == 403, (method, path, scope, r.text)
                    error = r.json()["error"]
                    assert error["type"] == "forbidden"
                    assert f"'{scope}'" in error["message"] and f"'{needs}'" in error["message"]


TOOL_ARGS: dict[str, dict[str, Any]] = {
    "search": {"question": QUESTION, "top_k": 2},
    "ask": {"question": QUESTION},
    "status": {},
    "cypher": {"statement": "RETURN 1"},
}


async def call_every_tool(url: str, key: str, chunk_id: str) -> dict[str, Any]:
    import httpx2

    args = TOOL_ARGS | {"get_chunk": {"chunk_id": chunk_id}}
    async with (
        httpx2.AsyncClient(headers=bearer(key), timeout=300) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as c,
    ):
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS.keys()
        return {name: await c.call_tool(name, args[name]) for name in TOOLS}


def test_every_mcp_tool_with_every_scope_and_none(keyed: LiveServer, chunk_id: str) -> None:
    url = f"{keyed.url}/mcp/"
    for headers in ({}, bearer("wrong-key-000000")):
        r = httpx.post(url, json={}, headers=headers, timeout=60)
        assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"
    for scope, key in KEYS.items():
        results = asyncio.run(call_every_tool(url, key, chunk_id))
        for name, result in results.items():
            text = result.content[0].text if result.content else ""
            needs = TOOL_NEEDS[name]
            if not grants(scope, needs):
                assert result.is_error and text.startswith("forbidden"), (name, scope, text)
                assert f"'{scope}'" in text and f"'{needs}'" in text
            elif name == "cypher":  # let through; the embedded backend has no Cypher
                assert result.is_error and "Neo4j" in text and "forbidden" not in text
            else:
                assert not result.is_error, (name, scope, text)
