"""`neorag ask` with NEORAG_API__URL: the question goes to a running `neorag api` (real
HTTP, uvicorn on a free port) and is shown as the in-process answer is; a server that is
down, a refused key or a `--backend` that would be ignored is one error line."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from app.api.server import create_app
from app.cli import app
from app.settings import Settings
from tests.app.api.conftest import LiveServer, live_server, wait_ready
from tests.app.test_streamlit_app import QUESTION

KEY = "remote-ask-key-1234"


@pytest.fixture(scope="module")
def keyed_server(index_settings: Settings) -> Iterator[LiveServer]:
    settings = index_settings.model_copy(
        update={"api": index_settings.api.model_copy(update={"keys": SecretStr(f"{KEY}:read")})}
    )
    with live_server(create_app(settings)) as server:
        wait_ready(server.url)
        yield server


def env(settings: Settings, **more: str) -> dict[str, str]:
    return {
        "NEORAG_BACKEND": "embedded",
        "NEORAG_DATA_DIR": str(settings.data_dir),
        "NEORAG_API__URL": "",
        "NEORAG_API__CLIENT_KEY": "",
        **more,
    }


def ask(environment: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["ask", QUESTION, *args], env=environment)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_the_api_answers_as_this_process_does(
    index_settings: Settings, keyed_server: LiveServer
) -> None:
    code, here, _ = ask(env(index_settings), "--json")
    assert code == 0
    remote = env(index_settings, NEORAG_API__URL=keyed_server.url, NEORAG_API__CLIENT_KEY=KEY)
    code, there, _ = ask(remote, "--json")
    assert code == 0
    local, served = json.loads(here), json.loads(there)
    assert served["answer"]["text"] == local["answer"]["text"]
    assert [c["chunk_id"] for c in served["citations"]] == [
        c["chunk_id"] for c in local["citations"]
    ]
    assert served["collection"] == "default"
    code, shown, _ = ask(remote)  # the human-readable output, rendered from the payload
    assert code == 0 and "citations" in shown and "trace: mode default" in shown
    assert local["answer"]["text"].split("\n")[0].split(" [")[0] in shown


def test_a_refused_key_is_one_line(index_settings: Settings, keyed_server: LiveServer) -> None:
    for key in ("", "wrong-key-000000"):
        code, _, err = ask(
            env(index_settings, NEORAG_API__URL=keyed_server.url, NEORAG_API__CLIENT_KEY=key)
        )
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1, err
        assert lines[0].startswith("error: the API at") and "401" in lines[0]
        assert KEY not in err


def test_an_api_that_is_down_is_one_line(index_settings: Settings) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = ask(env(index_settings, NEORAG_API__URL=f"http://127.0.0.1:{port}"))
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "cannot reach the neorag API" in lines[0] and "NEORAG_API__URL" in lines[0]


def test_a_backend_the_api_would_ignore_is_an_error(index_settings: Settings) -> None:
    code, _, err = ask(
        env(index_settings, NEORAG_API__URL="http://127.0.0.1:9"), "--backend", "embedded"
    )
    assert code == 2 and "--backend does not apply" in err
