"""The API and the MCP tools on the real Neo4j + GDS server: readiness (GDS present, an
index published), retrieval from a collection, and read-only Cypher through the guard
`neorag cypher` uses (app/cypher_service.py), over HTTP and over MCP at /mcp."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from app.api.server import create_app
from app.collections import delete_collection
from app.ingest_service import ingest_once
from app.settings import Settings
from graph.config import Neo4jConfig
from tests.app.api.conftest import LiveServer, live_server, wait_ready
from tests.app.test_streamlit_app import QUESTION, write_docs
from tests.conftest import fresh_collection

pytestmark = pytest.mark.neo4j
COUNT = "MATCH (c:Chunk {collection: $collection}) RETURN count(c) AS chunks"


@pytest.fixture(scope="module")
def neo4j_settings(
    neo4j_config: Neo4jConfig, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    tmp = tmp_path_factory.mktemp("api-neo4j")
    settings = Settings(backend="neo4j", data_dir=tmp / "data").for_collection(fresh_collection())
    assert settings.neo4j_uri == neo4j_config.uri
    report = ingest_once(settings, write_docs(tmp / "docs"))
    assert report.ok
    yield settings
    delete_collection(settings)


@pytest.fixture(scope="module")
def neo4j_server(neo4j_settings: Settings) -> Iterator[LiveServer]:
    with live_server(create_app(neo4j_settings)) as live:
        wait_ready(live.url)
        yield live


def test_ready_and_retrieve_on_neo4j(neo4j_server: LiveServer, neo4j_settings: Settings) -> None:
    with httpx.Client(base_url=neo4j_server.url, timeout=300) as c:
        ready = c.get("/readyz").json()
        assert ready["status"] == "ready" and ready["backend"] == "neo4j"
        assert ready["collection"] == neo4j_settings.collection
        body = c.post(
            "/v1/retrieve",
            json={"question": QUESTION, "collection": neo4j_settings.collection, "mode": "tigrag"},
        ).json()
    assert "Silverrun" in " ".join(ch["text"] for ch in body["context"])
    assert body["index_version"] == ready["index_version"]


def test_cypher_route_reads_and_refuses_writes(
    neo4j_server: LiveServer, neo4j_settings: Settings
) -> None:
    with httpx.Client(base_url=neo4j_server.url, timeout=300) as c:
        chunks = c.get("/v1/status", params={"collection": neo4j_settings.collection}).json()[
            "chunks"
        ]
        r = c.post(
            "/v1/cypher",
            json={"statement": COUNT, "params": {"collection": neo4j_settings.collection}},
        )
        assert r.status_code == 200, r.text
        assert r.json()["keys"] == ["chunks"] and r.json()["rows"] == [{"chunks": chunks}]
        refused = c.post("/v1/cypher", json={"statement": "CREATE (n:ApiProbe) RETURN n"})
        assert refused.status_code == 403
        assert refused.json()["error"]["type"] == "statement_refused"
        missing = c.post("/v1/cypher", json={"statement": COUNT})
        assert missing.status_code == 400 and "collection" in missing.json()["error"]["message"]
        probe = c.post("/v1/cypher", json={"statement": "MATCH (n:ApiProbe) RETURN count(n) AS n"})
        assert probe.json()["rows"] == [{"n": 0}]


def test_mcp_cypher_tool_uses_the_same_guard(
    neo4j_server: LiveServer, neo4j_settings: Settings
) -> None:
    async def run() -> tuple[Any, Any]:
        async with Client(f"{neo4j_server.url}/mcp/", read_timeout_seconds=300) as client:
            read = await client.call_tool(
                "cypher",
                {"statement": COUNT, "params": {"collection": neo4j_settings.collection}},
            )
            write = await client.call_tool(
                "cypher", {"statement": "MATCH (c:Chunk) SET c.touched = true RETURN c"}
            )
            return read, write

    read, write = asyncio.run(run())
    assert not read.is_error and read.structured_content["rows"][0]["chunks"] > 0
    assert write.is_error and "write" in write.content[0].text.lower()
