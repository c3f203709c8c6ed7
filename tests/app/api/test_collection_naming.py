"""One way to name a collection: `?collection=` on every /v1 route that reads one (the
`openai` client included, through `default_query`), the older body and form fields kept,
and a collection given where it is not read refused instead of replaced by the server's.

A route that reads `?collection=` is shown to by naming one that does not exist (404) or
an invalid name (400, before anything is written); the upload is followed to the end,
since landing in `default` was the bug."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from openai import BadRequestError, NotFoundError, OpenAI

from app.api.server import create_app
from app.settings import Settings
from tests.app.api.conftest import LiveServer, copy_index, live_server
from tests.app.test_streamlit_app import QUESTION

ASK = {"question": QUESTION}
CHAT = {"messages": [{"role": "user", "content": QUESTION}]}
UPLOAD = {"files": {"files": ("note.md", b"# Note\n\nThe Silverrun is cold.\n")}}
# routes that read a collection: method, path, request kwargs
READS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/retrieve", {"json": ASK}),
    ("POST", "/v1/ask", {"json": ASK}),
    ("POST", "/v1/chat/completions", {"json": CHAT}),
    ("GET", "/v1/status", {}),
    ("GET", "/v1/documents", {}),
    ("GET", "/v1/chunks/{chunk_id}", {}),
    ("POST", "/v1/documents", UPLOAD),
    ("DELETE", "/v1/documents/{doc_id}", {}),
    ("POST", "/v1/ingest", {"json": {"path": "/etc"}}),
]
READS_NONE: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/v1/models", {}),
    ("GET", "/v1/collections", {}),
    ("GET", "/v1/jobs", {}),
    ("GET", "/v1/jobs/{job_id}", {}),
    ("POST", "/v1/cypher", {"json": {"statement": "RETURN 1"}}),
]


def concrete(path: str) -> str:
    return (
        path.replace("{chunk_id}", "default:a.md%231")
        .replace("{doc_id}", "default:a.md")
        .replace("{job_id}", "0123456789abcdef")
    )


def error(r: Any, status: int, kind: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["type"] == kind, r.text
    return str(r.json()["error"]["message"])


def test_the_tables_cover_every_v1_route(client: TestClient) -> None:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    served = {(m.upper(), p) for p, item in paths.items() if p.startswith("/v1/") for m in item}
    assert served == {(m, p) for m, p, _ in READS + READS_NONE}


def test_every_route_that_reads_a_collection_reads_the_query_parameter(
    client: TestClient,
) -> None:
    for method, path, kwargs in READS:
        r = client.request(method, concrete(path), params={"collection": "Bad Name!"}, **kwargs)
        error(r, 400, "invalid_collection")  # read before anything is written
    for method, path, kwargs in READS[:6]:  # the reads: an unknown collection is a 404
        r = client.request(method, concrete(path), params={"collection": "nowhere"}, **kwargs)
        assert "'nowhere'" in error(r, 404, "unknown_collection"), path
    r = client.post("/v1/retrieve", params={"collection": "default"}, json=ASK)
    assert r.status_code == 200 and r.json()["collection"] == "default"


def test_a_collection_where_none_is_read_is_refused(client: TestClient) -> None:
    for method, path, kwargs in READS_NONE:
        r = client.request(method, concrete(path), params={"collection": "default"}, **kwargs)
        assert "reads no collection" in error(r, 400, "invalid_request"), path
    # an unknown field of neorag's own bodies is a 422 naming it, never ignored
    r = client.post("/v1/retrieve", json={**ASK, "collections": "default"})
    assert error(r, 422, "invalid_request") == "collections: not a field this route reads"
    r = client.post("/v1/cypher", json={"statement": "RETURN 1", "collection": "default"})
    assert "collection" in error(r, 422, "invalid_request")


def test_the_older_fields_still_work_and_may_not_contradict(client: TestClient) -> None:
    r = client.post("/v1/ask", json={**ASK, "collection": "default"})
    assert r.status_code == 200 and r.json()["collection"] == "default"
    both = client.post(
        "/v1/ask", params={"collection": "default"}, json={**ASK, "collection": "default"}
    )
    assert both.status_code == 200
    for path, body in (("/v1/retrieve", ASK), ("/v1/chat/completions", CHAT)):
        r = client.post(
            path, params={"collection": "nowhere"}, json={**body, "collection": "default"}
        )
        message = error(r, 400, "conflicting_collection")
        assert "'nowhere'" in message and "'default'" in message
    r = client.post(
        "/v1/documents", params={"collection": "up"}, data={"collection": "other"}, **UPLOAD
    )
    assert "form" in error(r, 400, "conflicting_collection")


def test_upload_lands_in_the_named_collection(index_settings: Settings, tmp_path: Path) -> None:
    settings = copy_index(index_settings, tmp_path)
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/documents", params={"collection": "up"}, **UPLOAD)
        assert r.status_code == 202, r.text
        job = r.json()["job"]
        assert job["collection"] == "up"
        deadline = time.monotonic() + 300
        while job["state"] not in ("succeeded", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            job = c.get(f"/v1/jobs/{job['id']}").json()
        assert job["state"] == "succeeded", job
        up = c.get("/v1/documents", params={"collection": "up"}).json()["documents"]
        assert [d["title"] for d in up] == ["Note"]
        default = c.get("/v1/documents").json()["documents"]
        assert len(default) == 4  # nothing landed in the server's collection


@pytest.fixture(scope="module")
def elsewhere(index_settings: Settings) -> Any:
    """A server whose own collection is `other` (empty): a request that reaches the index
    of `default` can only have named it."""
    with live_server(create_app(index_settings.for_collection("other"))) as live:
        yield live


def test_openai_client_names_the_collection_once(elsewhere: LiveServer) -> None:
    base = f"{elsewhere.url}/v1"
    pinned = OpenAI(
        base_url=base, api_key="unused", default_query={"collection": "default"}, timeout=120
    )
    reply = pinned.chat.completions.create(model="default", messages=CHAT["messages"])
    assert reply.model_extra is not None and reply.model_extra["neorag"]["collection"] == "default"
    assert "Silverrun" in (reply.choices[0].message.content or "")
    plain = OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=120)
    with pytest.raises(NotFoundError):  # the server's own collection, `other`, is empty
        plain.chat.completions.create(model="default", messages=CHAT["messages"])
    body = plain.chat.completions.create(
        model="default", messages=CHAT["messages"], extra_body={"collection": "default"}
    )
    assert body.model_extra is not None and body.model_extra["neorag"]["collection"] == "default"
    with pytest.raises(BadRequestError) as info:
        plain.models.list(extra_query={"collection": "default"})
    assert "reads no collection" in str(info.value)
