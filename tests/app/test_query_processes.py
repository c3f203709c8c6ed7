"""Questions answered in query processes (app/query_processes.py), as `neorag api` answers
them: the same answers as in-process, errors with their own types, a killed process
replaced, and the real server over HTTP with concurrent clients."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from app.overrides import with_overrides
from app.queries import LocalQueries
from app.query_processes import ProcessQueries, QueryProcessLost
from app.retrieval.base import BadQuestion
from app.service import QueryOptions, UnknownChunk, UnknownMode
from app.settings import Settings
from tests.app.fake_openai import fake_chat_server
from tests.app.test_service import QUESTIONS
from tests.app.test_streamlit_app import build_index

pytestmark = pytest.mark.slow
NEORAG = str(Path(sys.executable).with_name("neorag"))


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tiny = build_index(tmp_path_factory.mktemp("query-processes"))
    return Settings(backend="embedded", data_dir=tiny.data_dir)


@pytest.fixture(scope="module")
def processes(settings: Settings) -> Iterator[ProcessQueries]:
    queries = ProcessQueries(settings, 2, budget=1)
    queries.warm(settings)
    yield queries
    queries.close()


def _ids(asked) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in asked.found.result.context]


def test_answers_equal_the_in_process_ones(processes: ProcessQueries, settings: Settings) -> None:
    local = LocalQueries()
    try:
        for question in QUESTIONS:
            for mode in ("default", "tigrag"):
                options = QueryOptions(mode=mode, top_k=3)
                there = processes.ask(settings, question, options, max_chars=None)
                here = local.ask(settings, question, options, max_chars=None)
                assert there.found.engine is None  # nothing of the engine crossed over
                assert _ids(there) == _ids(here)
                assert there.answer.text == here.answer.text
                assert there.payload()["index_version"] == here.payload()["index_version"]
        found = processes.retrieve(settings, QUESTIONS[0], QueryOptions(), max_chars=None)
        chunk = processes.get_chunk(settings, found.result.context[0].id)
        assert chunk["text"] == found.result.context[0].text
        ready = processes.readiness(settings)
        assert ready == local.readiness(settings) and ready["chunks"] > 0
    finally:
        local.close()


def test_with_a_chat_model_the_query_process_only_retrieves(
    processes: ProcessQueries, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generation waits on the model's server, so it runs in the HTTP process: the query
    process is asked to retrieve only, and the generated answer cites its context."""
    calls: list[str] = []
    real = processes._run
    monkeypatch.setattr(
        processes, "_run", lambda name, *a, **k: calls.append(name) or real(name, *a, **k)
    )
    reply = ("The passages say so [1].\n", "Answer: it is [1]")
    with fake_chat_server(reply) as chat:
        llm = with_overrides(
            settings, {"llm.provider": "openai", "llm.model": "m", "llm.base_url": chat.url}
        )
        asked = processes.ask(llm, QUESTIONS[0], QueryOptions(top_k=3), max_chars=None)
        streamed = processes.ask_stream(llm, QUESTIONS[0], QueryOptions(top_k=3), max_chars=None)
        text = "".join(streamed)
    assert calls == ["retrieve", "retrieve"] and len(chat.requests) == 2
    assert asked.answer.text == "it is [1]" and not asked.answer.extractive
    assert "it is [1]" in text


def test_errors_keep_their_type(processes: ProcessQueries, settings: Settings) -> None:
    with pytest.raises(BadQuestion, match="empty"):
        processes.ask(settings, "   ", QueryOptions(), max_chars=None)
    with pytest.raises(BadQuestion, match="at most 16"):
        processes.retrieve(settings, "x" * 17, QueryOptions(), max_chars=16)
    with pytest.raises(UnknownMode):
        processes.ask(settings, QUESTIONS[0], QueryOptions(mode="nope"), max_chars=None)
    with pytest.raises(UnknownChunk):
        processes.get_chunk(settings, "no-such-chunk")


def test_a_killed_query_process_is_replaced(settings: Settings) -> None:
    queries = ProcessQueries(settings, 1, budget=1)
    try:
        queries.warm(settings)
        [pid] = {f.result() for f in queries._started}
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        lost = False
        while time.monotonic() < deadline and not lost:
            try:
                queries.ask(settings, QUESTIONS[0], QueryOptions(), max_chars=None)
                time.sleep(0.2)  # the pool may not have noticed the death yet
            except QueryProcessLost:
                lost = True
        assert lost, "a dead query process went unnoticed"
        asked = queries.ask(settings, QUESTIONS[0], QueryOptions(), max_chars=None)
        assert asked.answer.text
        assert {f.result() for f in queries._started} != {pid}
    finally:
        queries.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_neorag_api_answers_concurrent_clients(settings: Settings) -> None:
    """The real server: one HTTP process, two query processes, 12 clients at once; every
    answer equals the one its question gets alone; stopping the server stops them all."""
    port = _free_port()
    env = {**os.environ, "NEORAG_DATA_DIR": str(settings.data_dir), "NEORAG_BACKEND": "embedded"}
    server = subprocess.Popen(
        [NEORAG, "api", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
            try:
                if httpx.get(f"{url}/readyz", timeout=10).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        children = _children(server.pid)
        assert len(children) >= 2, children  # the query processes (and the pool's helper)

        def ask(question: str) -> tuple[int, str, list[str]]:
            with httpx.Client(base_url=url, timeout=300) as http:
                r = http.post("/v1/ask", json={"question": question})
                cited = [c["chunk_id"] for c in r.json().get("citations", [])]
                return r.status_code, r.json().get("answer", {}).get("text", ""), cited

        alone = {q: ask(q) for q in QUESTIONS}
        assert all(status == 200 for status, _, _ in alone.values())
        with ThreadPoolExecutor(12) as clients:
            together = list(clients.map(ask, QUESTIONS * 4))
        assert together == [alone[q] for q in QUESTIONS * 4]
        r = httpx.post(f"{url}/v1/ask", json={"question": " "}, timeout=60)
        assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_question"
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in children):
        time.sleep(0.2)
    assert not [p for p in children if _alive(p)], "query processes outlived the server"


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"
