"""Fixtures of the HTTP API tests: a tiny embedded index, the app in-process (TestClient),
and the same app behind a real uvicorn server on a free 127.0.0.1 port (real HTTP for the
`openai` client, ChatOpenAI, the MCP client and the concurrency tests)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api.server import create_app
from app.settings import Settings
from tests.app.test_streamlit_app import build_index


@dataclass(frozen=True, slots=True)
class LiveServer:
    url: str
    app: FastAPI


@contextmanager
def live_server(app: FastAPI) -> Iterator[LiveServer]:
    """`app` served by uvicorn in a thread until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield LiveServer(url, app)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def wait_ready(url: str, timeout: float = 120) -> None:
    """Until /readyz says ready (the warm-up loaded the model and the index)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=30).status_code == 200:
                return
        except httpx.TimeoutException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} never became ready")


@pytest.fixture(scope="package")
def index_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings over a tiny embedded index (4 documents), shared read-only by the package."""
    tiny = build_index(tmp_path_factory.mktemp("api-index"))
    return Settings(backend="embedded", data_dir=tiny.data_dir)


@pytest.fixture(scope="package")
def client(index_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(index_settings)) as c:
        yield c


@pytest.fixture(scope="package")
def server(index_settings: Settings) -> Iterator[LiveServer]:
    with live_server(create_app(index_settings)) as live:
        wait_ready(live.url)
        yield live


def copy_index(source: Settings, target: Path) -> Settings:
    """A private copy of the tiny index (for tests that write or change settings)."""
    import shutil

    shutil.copytree(source.data_dir, target / "data")
    return source.model_copy(update={"data_dir": target / "data"})
