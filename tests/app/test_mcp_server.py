"""The MCP server driven by the official SDK's own client: over stdio (`neorag mcp` as a
subprocess, as a desktop client starts it) and over streamable HTTP at /mcp of a real
uvicorn server; the tools' results are checked against the service layer's."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from app import service
from app.api.server import create_app
from app.service import EnginePool
from app.settings import Settings
from tests.app.api.conftest import LiveServer, live_server, wait_ready
from tests.app.test_streamlit_app import QUESTION, build_index

TOOLS = {"search", "ask", "get_chunk", "status", "cypher"}
NEORAG = str(Path(sys.executable).with_name("neorag"))


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tiny = build_index(tmp_path_factory.mktemp("mcp"))
    return Settings(backend="embedded", data_dir=tiny.data_dir)


def payload(result: Any) -> Any:
    """A tool's result: its structured content, else its JSON text."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        found = result.structured_content
        return found.get("result", found) if set(found) == {"result"} else found
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error
    return result.content[0].text


async def exercise(client: Client, settings: Settings) -> None:
    """Every tool once, its results compared with the service layer's own."""
    tools = {t.name for t in (await client.list_tools()).tools}
    assert tools == TOOLS
    found = payload(await client.call_tool("search", {"question": QUESTION, "top_k": 3}))
    pool = EnginePool()
    try:
        direct = service.retrieve(pool, settings, QUESTION, service.QueryOptions(top_k=3))
    finally:
        pool.close()
    assert [p["chunk_id"] for p in found["passages"]] == [c.id for c in direct.result.context]
    assert found["index_version"] == direct.index_version
    first = found["passages"][0]
    chunk = payload(await client.call_tool("get_chunk", {"chunk_id": first["chunk_id"]}))
    assert chunk["chunk_id"] == first["chunk_id"] and chunk["text"].startswith(first["text"])
    asked = payload(await client.call_tool("ask", {"question": QUESTION, "mode": "tigrag"}))
    assert "Silverrun" in asked["answer"]["text"] and asked["citations"]
    status = payload(await client.call_tool("status", {}))
    assert status["documents"] == 4 and status["collection"] == "default"
    message = error_text(await client.call_tool("search", {"question": "  "}))
    assert "empty" in message and "Traceback" not in message
    message = error_text(await client.call_tool("ask", {"question": QUESTION, "mode": "x"}))
    assert "unknown mode 'x'" in message
    message = error_text(await client.call_tool("status", {"collection": "nowhere"}))
    assert "'nowhere'" in message
    message = error_text(await client.call_tool("get_chunk", {"chunk_id": "nope#1"}))
    assert "no chunk" in message
    message = error_text(await client.call_tool("cypher", {"statement": "RETURN 1"}))
    assert "Neo4j" in message  # the embedded backend has no Cypher: said in one line
    # a collection (or any argument) a tool does not read is refused, never dropped
    message = error_text(
        await client.call_tool("cypher", {"statement": "RETURN 1", "collection": "default"})
    )
    assert "takes no collection argument" in message and "reads no collection" in message
    message = error_text(await client.call_tool("status", {"colection": "default"}))
    assert "takes no colection argument" in message and "collection" in message


def test_stdio_with_the_sdk_client(settings: Settings) -> None:
    env = {
        "NEORAG_BACKEND": "embedded",
        "NEORAG_DATA_DIR": str(settings.data_dir),
        # keys guard HTTP only: the stdio user has full rights (cypher is let through)
        "NEORAG_API__KEYS": "stdio-reader-key:read",
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    if "NEORAG_CACHE" in os.environ:
        env["NEORAG_CACHE"] = os.environ["NEORAG_CACHE"]
    params = StdioServerParameters(command=NEORAG, args=["mcp"], env=env)

    async def run() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await exercise(client, settings)

    asyncio.run(run())


@pytest.fixture(scope="module")
def http_server(settings: Settings) -> Iterator[LiveServer]:
    with live_server(create_app(settings)) as live:
        wait_ready(live.url)
        yield live


def test_streamable_http_at_mcp(http_server: LiveServer, settings: Settings) -> None:
    async def run() -> None:
        async with Client(f"{http_server.url}/mcp/", read_timeout_seconds=300) as client:
            await exercise(client, settings)

    asyncio.run(run())


def test_http_mcp_needs_a_read_key(settings: Settings) -> None:
    from pydantic import SecretStr

    keyed = settings.model_copy(
        update={"api": settings.api.model_copy(update={"keys": SecretStr("mcp-reader-key:read")})}
    )
    with live_server(create_app(keyed)) as live:
        assert httpx.post(f"{live.url}/mcp/", json={}, timeout=30).status_code == 401

        async def run() -> list[str]:
            import httpx2

            headers = {"Authorization": "Bearer mcp-reader-key"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=300) as http,
                Client(
                    streamable_http_client(f"{live.url}/mcp/", http_client=http),
                    read_timeout_seconds=300,
                ) as client,
            ):
                return [t.name for t in (await client.list_tools()).tools]

        assert set(asyncio.run(run())) == TOOLS


def test_http_mcp_host_check_and_the_proxy_setting(settings: Settings) -> None:
    """Bound to loopback, /mcp refuses other Host headers (DNS rebinding) unless the proxy's
    name is configured in NEORAG_API__MCP_ALLOWED_HOSTS."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Host": "rag.example.org", "Accept": "application/json, text/event-stream"}
    proxied = settings.model_copy(
        update={"api": settings.api.model_copy(update={"mcp_allowed_hosts": ["rag.example.org"]})}
    )
    with live_server(create_app(settings)) as plain, live_server(create_app(proxied)) as named:
        refused = httpx.post(f"{plain.url}/mcp/", json=init, headers=headers, timeout=60)
        accepted = httpx.post(f"{named.url}/mcp/", json=init, headers=headers, timeout=60)
    assert refused.status_code == 421
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["result"]["serverInfo"]["name"] == "neorag"
