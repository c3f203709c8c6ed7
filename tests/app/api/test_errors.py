"""Every bad input is a 4xx JSON error `{"error": {"type", "message"}}` naming the problem,
never a 500 or a traceback; a down Neo4j is a 503 with the CLI's one-line message."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.api.server import create_app
from app.settings import Settings
from tests.app.api.conftest import copy_index
from tests.app.test_streamlit_app import QUESTION


def error_of(r: Any, status: int, kind: str) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and body["error"]["type"] == kind, body
    message = body["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize("question", ["", "   ", "\n\t "])
def test_empty_or_whitespace_question(client: TestClient, question: str) -> None:
    for route in ("/v1/retrieve", "/v1/ask"):
        r = client.post(route, json={"question": question})
        assert "empty" in error_of(r, 400, "invalid_question")


def test_question_over_the_limit(client: TestClient) -> None:
    r = client.post("/v1/ask", json={"question": "x" * 4001})
    assert "at most 4,000" in error_of(r, 400, "invalid_question")
    ok = client.post("/v1/retrieve", json={"question": "Mount Kell " + "x" * 3980})
    assert ok.status_code == 200


def test_a_question_the_retrieval_would_cut_is_refused(index_settings: Settings) -> None:
    """The API's bound is the retrieval's own limit unless set lower: a question the
    retrieval would truncate (a trace note nobody reads) is refused with a 400 instead."""
    lowered = index_settings.model_copy(
        update={"retrieval": index_settings.retrieval.model_copy(update={"max_question_chars": 60})}
    )
    assert lowered.question_limit == 60
    higher_api = lowered.model_copy(
        update={"api": lowered.api.model_copy(update={"max_question_chars": 500})}
    )
    assert higher_api.question_limit == 60  # never above what the retrieval keeps
    lower_api = lowered.model_copy(
        update={"api": lowered.api.model_copy(update={"max_question_chars": 30})}
    )
    assert lower_api.question_limit == 30
    with TestClient(create_app(higher_api)) as c:
        for route in ("/v1/retrieve", "/v1/ask"):
            r = c.post(route, json={"question": "Mount Kell " + "x" * 60})
            assert "at most 60" in error_of(r, 400, "invalid_question")
        assert c.post("/v1/retrieve", json={"question": "Where is Mount Kell?"}).status_code == 200


def test_unknown_mode(client: TestClient) -> None:
    r = client.post("/v1/retrieve", json={"question": QUESTION, "mode": "telepathy"})
    message = error_of(r, 400, "unknown_mode")
    assert "'telepathy'" in message and "tigrag" in message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": 42}, "question"),
        ({"question": ["a"]}, "question"),
        ({"question": QUESTION, "top_k": "5"}, "top_k"),
        ({"question": QUESTION, "top_k": 0}, "top_k"),
        ({"question": QUESTION, "hops": 9}, "hops"),
        ({"question": QUESTION, "mode": 3}, "mode"),
        ({"question": QUESTION, "stream": "yes"}, "stream"),
        ({}, "question"),
    ],
)
def test_wrong_json_types_name_the_field(
    client: TestClient, body: dict[str, Any], field: str
) -> None:
    r = client.post("/v1/ask", json=body)
    assert error_of(r, 422, "invalid_request").startswith(field)


def test_body_that_is_not_json(client: TestClient) -> None:
    r = client.post("/v1/ask", content=b"{not json", headers={"Content-Type": "application/json"})
    error_of(r, 422, "invalid_request")


def test_unknown_and_invalid_collection(client: TestClient) -> None:
    r = client.post("/v1/retrieve", json={"question": QUESTION, "collection": "nowhere"})
    assert "'nowhere'" in error_of(r, 404, "unknown_collection")
    r = client.post("/v1/ask", json={"question": QUESTION, "collection": "Bad Name!"})
    error_of(r, 400, "invalid_collection")
    error_of(
        client.get("/v1/documents", params={"collection": "nowhere"}), 404, "unknown_collection"
    )
    error_of(client.get("/v1/status", params={"collection": "nowhere"}), 404, "unknown_collection")


def test_unknown_ids(client: TestClient) -> None:
    error_of(client.get("/v1/jobs/0123456789abcdef0123456789abcdef"), 404, "not_found")
    error_of(client.get("/v1/jobs/..%2F..%2Fetc"), 404, "not_found")
    error_of(client.get("/v1/chunks/default:nothing%230"), 404, "not_found")
    error_of(client.delete("/v1/documents/default:nothing"), 404, "not_found")
    error_of(client.get("/v1/nothing-here"), 404, "not_found")
    error_of(client.put("/v1/ask", json={}), 405, "method_not_allowed")


def test_path_outside_the_allowed_roots(client: TestClient, tmp_path: Path) -> None:
    r = client.post("/v1/ingest", json={"path": "/etc"})
    assert "outside the allowed ingest roots" in error_of(r, 403, "path_not_allowed")
    link = tmp_path / "escape"
    link.symlink_to("/etc")
    r = client.post("/v1/ingest", json={"path": str(link)})
    error_of(r, 403, "path_not_allowed")


def test_upload_over_the_size_limit(index_settings: Settings, tmp_path: Path) -> None:
    settings = copy_index(index_settings, tmp_path)
    settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"max_upload_bytes": 2048})}
    )
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/documents", files={"files": ("big.md", b"# Big\n" + b"x" * 4096)})
        message = error_of(r, 413, "too_large")
        assert "big.md" in message and "2,048" in message
        assert not (settings.uploads_dir).exists() or not any(settings.uploads_dir.rglob("*.md"))


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("setup.exe", b"MZ\x90\x00\x03\x00", ("setup.exe", "unsupported type", ".exe", ".rst")),
        ("notes", b"plain words", ("notes", "no file extension")),
        ("fake.md", b"# Title\n\x00\x01\x02", ("fake.md", "binary content")),
    ],
    ids=["exe", "no-extension", "binary-under-a-text-name"],
)
def test_upload_of_an_unsupported_type_is_refused_and_nothing_kept(
    index_settings: Settings, tmp_path: Path, name: str, data: bytes, words: tuple[str, ...]
) -> None:
    """The whole upload is refused (a good file beside the bad one is not kept either) and
    no job starts."""
    settings = copy_index(index_settings, tmp_path)
    with TestClient(create_app(settings)) as c:
        good = ("good.md", b"# Good\n\nA readable page.\n")
        r = c.post("/v1/documents", files=[("files", good), ("files", (name, data))])
        message = error_of(r, 415, "unsupported_type")
        assert all(word in message for word in words), message
        assert c.get("/v1/jobs").json()["jobs"] == []
    kept = list(settings.uploads_dir.rglob("*")) if settings.uploads_dir.exists() else []
    assert [p for p in kept if p.is_file()] == []


def test_chat_without_a_user_message_or_with_an_unknown_model(client: TestClient) -> None:
    r = client.post(
        "/v1/chat/completions",
        json={"model": "default", "messages": [{"role": "system", "content": "hi"}]},
    )
    assert "no user message" in error_of(r, 400, "invalid_request")
    r = client.post(
        "/v1/chat/completions",
        json={"model": "gpt-4", "messages": [{"role": "user", "content": QUESTION}]},
    )
    error_of(r, 400, "unknown_mode")
    r = client.post("/v1/chat/completions", json={"model": "default", "messages": []})
    error_of(r, 422, "invalid_request")


def test_a_down_neo4j_is_503_with_the_cli_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing listens on port 1: the real driver fails to connect, as with a stopped server."""
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("NEORAG_BACKEND", "neo4j")
    monkeypatch.setenv("NEORAG_DATA_DIR", str(tmp_path))
    from app.cli import app as cli_app
    from app.settings import load_settings

    cli = CliRunner().invoke(cli_app, ["ask", QUESTION])
    assert cli.exit_code == 2
    cli_line = " ".join(cli.output.split()).removeprefix("error: ")
    with TestClient(create_app(load_settings())) as c:
        for r in (
            c.post("/v1/ask", json={"question": QUESTION}),
            c.post("/v1/retrieve", json={"question": QUESTION}),
            c.get("/v1/status"),
            c.get("/v1/documents"),
        ):
            message = error_of(r, 503, "backend_unavailable")
            assert message == cli_line
            assert "127.0.0.1:1" in message
        ready = c.get("/readyz")
        while "warming" in ready.text:
            time.sleep(0.1)
            ready = c.get("/readyz")
        assert ready.status_code == 503 and ready.json()["error"]["message"] == cli_line
    # The same through query processes, as `neorag api` serves: the error crosses back.
    from app.query_processes import ProcessQueries

    settings = load_settings()
    queries = ProcessQueries(settings, 1, budget=1)
    with TestClient(create_app(settings, queries)) as c:
        r = c.post("/v1/ask", json={"question": QUESTION})
        assert error_of(r, 503, "backend_unavailable") == cli_line
