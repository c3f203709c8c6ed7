"""Concurrent real HTTP requests on one server process: uvicorn runs the sync routes on its
thread pool, so many requests share one engine at once. Every answer equals the one its
question gets alone, none fails, and refreshes of the index while they run (as after a
re-ingest) never mix two index versions inside one response."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from app.settings import Settings
from tests.app.api.conftest import LiveServer
from tests.app.test_service import QUESTIONS

ROUTES = ("/v1/retrieve", "/v1/ask", "/v1/chat/completions")


def _call(http: httpx.Client, route: str, question: str, mode: str) -> tuple[int, list[str]]:
    if route == "/v1/chat/completions":
        body = {"model": mode, "messages": [{"role": "user", "content": question}]}
        r = http.post(route, json=body)
        ids = [c["chunk_id"] for c in r.json()["neorag"]["citations"]] if r.is_success else []
        return r.status_code, ids
    r = http.post(route, json={"question": question, "mode": mode})
    if not r.is_success:
        return r.status_code, []
    items = r.json()["context"] if route == "/v1/retrieve" else r.json()["citations"]
    return r.status_code, [c["chunk_id"] for c in items]


def test_concurrent_requests_answer_as_alone(server: LiveServer, index_settings: Settings) -> None:
    modes = ("default", "tigrag")
    jobs = [(r, q, m) for r in ROUTES for q in QUESTIONS for m in modes]
    with httpx.Client(base_url=server.url, timeout=300) as http:
        alone = {job: _call(http, *job) for job in jobs}
    assert all(status == 200 and ids for status, ids in alone.values())

    engine = server.app.state.queries.pool.engine(index_settings)
    stop = threading.Event()
    refreshes = 0

    def keep_refreshing() -> None:
        """As if another ingest was published, over and over: each refresh reloads."""
        nonlocal refreshes
        while not stop.is_set():
            engine._key = None
            engine.refresh()
            refreshes += 1

    def one(job: tuple[str, str, str]) -> tuple[tuple[str, str, str], tuple[int, list[str]]]:
        with httpx.Client(base_url=server.url, timeout=300) as http:
            return job, _call(http, *job)

    refresher = threading.Thread(target=keep_refreshing, daemon=True)
    refresher.start()
    try:
        with ThreadPoolExecutor(12) as clients:
            results = list(clients.map(one, jobs * 2))
    finally:
        stop.set()
        refresher.join(60)
    assert len(results) == 2 * len(jobs)
    failed = [(job, status) for job, (status, _) in results if status != 200]
    assert not failed
    differing = [job for job, got in results if got != alone[job]]
    assert not differing
    assert refreshes >= 2, "the index was not reloaded while requests ran"


def test_concurrent_streams_are_whole(server: LiveServer) -> None:
    def stream(question: str) -> str:
        with (
            httpx.Client(base_url=server.url, timeout=300) as http,
            http.stream("POST", "/v1/ask", json={"question": question, "stream": True}) as r,
        ):
            assert r.status_code == 200
            return r.read().decode()

    with ThreadPoolExecutor(8) as clients:
        bodies = list(clients.map(stream, QUESTIONS * 4))
    assert all(b.startswith("event: retrieval") and "event: answer" in b for b in bodies)
    assert not any("event: error" in b for b in bodies)
