"""README, Behind a reverse proxy: "Under a path prefix, set `NEORAG_API__ROOT_PATH` so
`/docs` links resolve; `FORWARDED_ALLOW_IPS` names the proxy whose `X-Forwarded-*` headers
are trusted."

The root path: the app `neorag api` builds from the environment serves /docs whose
OpenAPI link carries the prefix, and that link, with the prefix taken off as the README's
nginx `location /neorag/ { proxy_pass http://127.0.0.1:8000/; }` does, reaches the schema.
Without the setting there is no prefix.

FORWARDED_ALLOW_IPS: `neorag api` (app/api/launch.py `serve`) is run with uvicorn's
`run` replaced by a recorder, so no server starts; the arguments it would have started
uvicorn with build a real `uvicorn.Config`, and its loaded app (uvicorn's own proxy-headers
middleware in front of an app that reports the client and scheme it sees) is called with a request
from the proxy's address carrying `X-Forwarded-For`/`-Proto`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from app.api import launch
from app.api.server import create_app
from app.settings import Settings, load_settings
from ingest import threads

# ---- NEORAG_API__ROOT_PATH -------------------------------------------------------------


def _docs_links(client: TestClient) -> dict[str, str]:
    """The OpenAPI URL each documentation page loads."""
    found = {}
    for page in ("/docs", "/redoc"):
        r = client.get(page)
        assert r.status_code == 200, (page, r.text)
        urls = re.findall(r"""(?:url:\s*|spec-url=)['"]([^'"]*openapi\.json)['"]""", r.text)
        assert len(set(urls)) == 1, (page, urls)
        found[page] = urls[0]
    return found


@pytest.fixture()
def env_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., TestClient]:
    """The app as `neorag api` builds it from the environment (in-process queries; no
    lifespan, so nothing warms up: /docs needs no index)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEORAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NEORAG_BACKEND", "embedded")
    monkeypatch.delenv("NEORAG_API__KEYS", raising=False)

    def build(**env: str) -> TestClient:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = load_settings()
        app = create_app(settings)
        # uvicorn puts its root_path into every request's scope; TestClient does the same
        served = _launch_kwargs(monkeypatch, tmp_path, settings)
        return TestClient(app, root_path=served["root_path"])

    return build


def test_root_path_defaults_to_none(
    env_app: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEORAG_API__ROOT_PATH", raising=False)
    assert Settings().api.root_path == ""
    client = env_app()
    assert _docs_links(client) == {"/docs": "/openapi.json", "/redoc": "/openapi.json"}
    assert "servers" not in client.get("/openapi.json").json()


def test_root_path_prefixes_the_docs_links_and_they_resolve(
    env_app: Callable[..., TestClient],
) -> None:
    client = env_app(NEORAG_API__ROOT_PATH="/neorag")
    links = _docs_links(client)
    assert links == {"/docs": "/neorag/openapi.json", "/redoc": "/neorag/openapi.json"}
    # the proxy takes /neorag off before forwarding (the README's nginx location)
    forwarded = links["/docs"].removeprefix("/neorag")
    schema = client.get(forwarded)
    assert schema.status_code == 200 and schema.json()["info"]["title"] == "neorag"
    # "Try it out" calls go through the prefix too
    assert schema.json()["servers"] == [{"url": "/neorag"}]


# ---- NEORAG_API__CORS_ORIGINS ----------------------------------------------------------


def test_cors_allows_only_the_named_origins(env_app: Callable[..., TestClient]) -> None:
    """Without the setting no browser origin is allowed; with it, only those named (the
    preflight of a cross-origin POST, and the header on the answer)."""
    ui, other = "https://ui.example.org", "https://evil.example.org"
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    closed = env_app()
    assert (
        "access-control-allow-origin" not in closed.get("/healthz", headers={"Origin": ui}).headers
    )
    assert closed.options("/v1/retrieve", headers={"Origin": ui, **preflight}).status_code != 200
    opened = env_app(NEORAG_API__CORS_ORIGINS=f"{ui},https://other.example.org")
    allowed = opened.options("/v1/retrieve", headers={"Origin": ui, **preflight})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == ui
    assert (
        opened.get("/healthz", headers={"Origin": ui}).headers["access-control-allow-origin"] == ui
    )
    refused = opened.options("/v1/retrieve", headers={"Origin": other, **preflight})
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers


# ---- FORWARDED_ALLOW_IPS ---------------------------------------------------------------

PROXY, CLIENT = "10.0.0.5", "203.0.113.7"


def _launch_kwargs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings | None = None
) -> dict[str, Any]:
    """What `neorag api` passes to uvicorn.run (nothing is served)."""
    recorded: dict[str, Any] = {}
    # serve() exports the server's environment into os.environ; setting then deleting
    # each variable makes monkeypatch record (and restore) it whether or not it was set
    for name in (
        "PROMETHEUS_MULTIPROC_DIR",
        "NEORAG_BACKEND",
        "NEORAG_DATA_DIR",
        "NEORAG_COLLECTION",
        "NEORAG_API__HOST",
        "NEORAG_API__WORKERS",
        *threads.VARIABLES,
    ):
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: recorded.update(kw, args=a))
    launch.serve(settings or Settings(data_dir=tmp_path / "data"), "127.0.0.1", 8123, 1)
    assert recorded["args"] == ("app.api.server:create_app_from_env",)
    return recorded


class Reporter:
    """An ASGI app that records the client and scheme it is given."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.seen = {"client": scope["client"][0], "scheme": scope["scheme"]}
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def proxied(kwargs: dict[str, Any]) -> Any:
    """A callable: peer address → what the application sees for a request from that peer
    carrying the headers a proxy adds, through uvicorn configured as `neorag api` does."""
    reporter = Reporter()
    config = uvicorn.Config(
        reporter,
        proxy_headers=kwargs["proxy_headers"],
        forwarded_allow_ips=kwargs["forwarded_allow_ips"],
        log_config=None,
    )
    config.load()

    async def request(peer: str) -> dict[str, str]:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/healthz",
            "raw_path": b"/healthz",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"x-forwarded-for", CLIENT.encode()), (b"x-forwarded-proto", b"https")],
            "client": (peer, 40000),
            "server": ("127.0.0.1", 8123),
        }

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            return None

        await config.loaded_app(scope, receive, send)
        return reporter.seen

    return lambda peer: asyncio.run(request(peer))


def test_forwarded_headers_are_trusted_only_from_forwarded_allow_ips(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", PROXY)
    kwargs = _launch_kwargs(monkeypatch, tmp_path)
    assert kwargs["proxy_headers"] is True and kwargs["forwarded_allow_ips"] == PROXY
    seen_from = proxied(kwargs)
    assert seen_from(PROXY) == {"client": CLIENT, "scheme": "https"}
    # the same headers from anyone else are ignored
    assert seen_from("10.0.0.6") == {"client": "10.0.0.6", "scheme": "http"}


def test_without_forwarded_allow_ips_only_loopback_is_trusted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    kwargs = _launch_kwargs(monkeypatch, tmp_path)
    assert kwargs["forwarded_allow_ips"] == "127.0.0.1"
    seen_from = proxied(kwargs)
    assert seen_from("127.0.0.1") == {"client": CLIENT, "scheme": "https"}
    assert seen_from(PROXY) == {"client": PROXY, "scheme": "http"}
