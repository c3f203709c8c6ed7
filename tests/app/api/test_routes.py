"""The HTTP routes on a real embedded index: health, retrieval, answers (JSON and
Server-Sent Events), documents, chunks, status, the schema and the docs page."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient

from app.settings import Settings
from tests.app.test_streamlit_app import QUESTION


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    for _ in range(600):  # 503 "warming up" until the warm-up loaded the index and model
        if ready.status_code == 200 or "warming" not in ready.text:
            break
        time.sleep(0.2)
        ready = client.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["status"] == "ready" and body["backend"] == "embedded"
    assert body["chunks"] > 0 and body["index_version"]


def test_readyz_without_an_index_is_503_with_the_reason(tmp_path: Any) -> None:
    from app.api.server import create_app

    settings = Settings(backend="embedded", data_dir=tmp_path / "empty")
    with TestClient(create_app(settings)) as c:
        r = c.get("/readyz")
        while "warming" in r.text:
            time.sleep(0.1)
            r = c.get("/readyz")
    assert r.status_code == 503
    assert r.json()["status"] == "unavailable"
    assert r.json()["error"]["type"] == "not_ready" and r.json()["error"]["message"]


def test_retrieve_returns_ranking_context_trace_and_cypher(client: TestClient) -> None:
    r = client.post("/v1/retrieve", json={"question": QUESTION, "mode": "tigrag", "top_k": 3})
    assert r.status_code == 200
    body = r.json()
    assert body["mode"] == "tigrag" and body["collection"] == "default"
    assert r.headers["X-Neorag-Index-Version"] == body["index_version"]
    assert 0 < len(body["context"]) <= 3
    top = body["ranking"][0]
    assert top["chunk_id"].startswith(top["doc_id"] + "#") and isinstance(top["score"], float)
    assert "Silverrun" in " ".join(c["text"] for c in body["context"])
    assert {"title", "section_path", "source"} <= body["context"][0].keys()
    assert body["trace"]["steps"]
    assert body["cypher"].startswith(":param ids => [") and "MATCH" in body["cypher"]


def test_retrieve_knobs_reach_the_retriever(client: TestClient) -> None:
    no_hops = client.post("/v1/retrieve", json={"question": QUESTION, "mode": "tigrag", "hops": 0})
    assert not no_hops.json()["trace"]["hops"]
    one = client.post("/v1/retrieve", json={"question": QUESTION, "top_k": 1})
    assert len(one.json()["context"]) == 1


def test_literag_returns_chains(client: TestClient) -> None:
    body = client.post("/v1/retrieve", json={"question": QUESTION, "mode": "literag"}).json()
    assert isinstance(body["chains"], list) and body["context"]


def test_ask_answers_with_citations_mapped_to_chunks(client: TestClient) -> None:
    r = client.post("/v1/ask", json={"question": QUESTION})
    assert r.status_code == 200
    body = r.json()
    assert "Silverrun" in body["answer"]["text"]
    cited = body["answer"]["citations"]
    assert cited and all(1 <= n <= len(body["citations"]) for n in cited)
    numbers = [c["n"] for c in body["citations"]]
    assert numbers == list(range(1, len(numbers) + 1))
    assert all(c["chunk_id"].startswith(c["doc_id"] + "#") for c in body["citations"])
    assert body["usage"] == {}  # no chat model configured: the extractive answer


def test_ask_streams_server_sent_events(client: TestClient) -> None:
    with client.stream("POST", "/v1/ask", json={"question": QUESTION, "stream": True}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.read().decode())
    kinds = [k for k, _ in events]
    assert kinds[0] == "retrieval" and kinds[-1] == "answer" and "token" in kinds
    streamed = "".join(d["text"] for k, d in events if k == "token")
    final = events[-1][1]
    assert streamed == final["answer"]["text"] and final["citations"]
    assert events[0][1]["index_version"] == final["index_version"]


def test_documents_status_and_chunks(client: TestClient) -> None:
    docs = client.get("/v1/documents").json()
    assert docs["collection"] == "default" and len(docs["documents"]) == 4
    assert {d["title"] for d in docs["documents"]} >= {"Amber Sea", "Ferrymen's Guild"}
    status = client.get("/v1/status").json()
    assert status["documents"] == 4 and status["chunks"] > 0 and status["runs"]
    assert status["collection"] == "default" and status["backend"] == "embedded"
    chunk_id = client.post("/v1/retrieve", json={"question": QUESTION}).json()["context"][0][
        "chunk_id"
    ]
    chunk = client.get(f"/v1/chunks/{quote(chunk_id)}")  # ids hold `#` and `/`
    assert chunk.status_code == 200 and chunk.json()["chunk_id"] == chunk_id
    assert client.get("/v1/collections").json()["collections"][0]["name"] == "default"


def test_schema_and_docs(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = set(schema["paths"])
    for route in (
        "/v1/retrieve",
        "/v1/ask",
        "/v1/chat/completions",
        "/v1/models",
        "/v1/documents",
        "/v1/documents/{doc_id}",
        "/v1/ingest",
        "/v1/jobs/{job_id}",
        "/v1/status",
        "/healthz",
        "/readyz",
        "/metrics",
    ):
        assert route in paths, route
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_models_are_the_retrieval_modes(client: TestClient) -> None:
    from app.retrieval import mode_names

    body = client.get("/v1/models").json()
    assert body["object"] == "list"
    assert [m["id"] for m in body["data"]] == list(mode_names())


def test_requests_without_a_collection_use_the_servers(index_settings: Settings) -> None:
    """`neorag api --collection other`: a request naming none asks `other`."""
    from app.api.server import create_app

    with TestClient(create_app(index_settings.for_collection("other"))) as c:
        r = c.post("/v1/retrieve", json={"question": QUESTION})
        assert r.status_code == 404 and "'other'" in r.json()["error"]["message"]
        assert c.get("/v1/documents").status_code == 404
        named = c.post("/v1/retrieve", json={"question": QUESTION, "collection": "default"})
        assert named.status_code == 200 and named.json()["collection"] == "default"
