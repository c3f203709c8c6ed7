"""API keys with scopes: 401 without a key, 403 with too small a scope, and a key never in a
message, a log line or /metrics."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.api.launch import exposure_warning
from app.api.server import create_app
from app.settings import Settings
from tests.app.test_streamlit_app import QUESTION

READ, INGEST, ADMIN = "reader-key-1234", "ingest-key-5678", "admin-key-90ab"
SECRETS = (READ, INGEST, ADMIN)


def with_keys(settings: Settings, keys: str) -> Settings:
    return settings.model_copy(
        update={"api": settings.api.model_copy(update={"keys": SecretStr(keys)})}
    )


@pytest.fixture(scope="module")
def keyed(index_settings: Settings) -> Iterator[TestClient]:
    settings = with_keys(index_settings, f"{READ}:read,{INGEST}:ingest,{ADMIN}")
    with TestClient(create_app(settings)) as c:
        yield c


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_every_v1_route_needs_a_key(keyed: TestClient) -> None:
    calls = [
        ("POST", "/v1/retrieve", {"question": QUESTION}),
        ("POST", "/v1/ask", {"question": QUESTION}),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}),
        ("GET", "/v1/models", None),
        ("GET", "/v1/documents", None),
        ("GET", "/v1/status", None),
        ("GET", "/v1/jobs", None),
        ("POST", "/v1/ingest", {"path": "."}),
        ("DELETE", "/v1/documents/default:x", None),
        ("POST", "/v1/cypher", {"statement": "RETURN 1"}),
    ]
    for method, route, body in calls:
        for headers in ({}, bearer("wrong-key-000000"), {"Authorization": READ}):
            r = keyed.request(method, route, json=body, headers=headers)
            assert r.status_code == 401, (route, r.text)
            assert r.json()["error"]["type"] == "unauthorized"
            assert r.headers["WWW-Authenticate"] == "Bearer"
    assert keyed.get("/healthz").status_code == 200  # probes stay open
    assert keyed.post("/mcp/", json={}).status_code == 401


def test_scopes(keyed: TestClient) -> None:
    assert (
        keyed.post("/v1/ask", json={"question": QUESTION}, headers=bearer(READ)).status_code == 200
    )
    assert keyed.get("/v1/models", headers=bearer(INGEST)).status_code == 200
    r = keyed.post("/v1/ingest", json={"path": "/etc"}, headers=bearer(READ))
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    assert "'read'" in r.json()["error"]["message"]
    # an ingest key passes the scope check and reaches the path check
    r = keyed.post("/v1/ingest", json={"path": "/etc"}, headers=bearer(INGEST))
    assert r.status_code == 403 and r.json()["error"]["type"] == "path_not_allowed"
    r = keyed.post("/v1/cypher", json={"statement": "RETURN 1"}, headers=bearer(INGEST))
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    r = keyed.post("/v1/cypher", json={"statement": "RETURN 1"}, headers=bearer(ADMIN))
    assert r.json()["error"]["type"] != "forbidden"  # embedded: no Cypher, but allowed


def test_keys_never_appear_in_errors_logs_or_metrics(
    keyed: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seen = []
    for key in (*SECRETS, "wrong-key-000000"):
        for route in ("/v1/ingest", "/v1/cypher"):
            r = keyed.post(
                route, json={"path": "/etc", "statement": "RETURN 1"}, headers=bearer(key)
            )
            seen.append(r.text + str(dict(r.headers)))
    seen.append(keyed.get("/metrics").text)
    seen.append(caplog.text)
    for text in seen:
        for secret in (*SECRETS, "wrong-key-000000"):
            assert secret not in text


def test_bad_key_settings_do_not_echo_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `neorag api` prints for a bad NEORAG_API__KEYS (load_settings' one line)."""
    from app.settings import SettingsError, load_settings

    monkeypatch.setenv("NEORAG_API__KEYS", "s3cret-value-xyz:superuser")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert "s3cret-value-xyz" not in str(info.value) and "key #1" in str(info.value)
    assert "NEORAG_API__KEYS" in str(info.value)
    monkeypatch.setenv("NEORAG_API__KEYS", "short")
    with pytest.raises(SettingsError, match="shorter than 8") as info:
        load_settings()
    assert "'short'" not in str(info.value)


def test_exposed_bind_without_keys_warns(index_settings: Settings) -> None:
    assert exposure_warning(index_settings, "127.0.0.1") is None
    assert exposure_warning(index_settings, "localhost") is None
    assert exposure_warning(index_settings, "::1") is None
    warning = exposure_warning(index_settings, "0.0.0.0")
    assert warning and "NEORAG_API__KEYS" in warning
    assert exposure_warning(with_keys(index_settings, f"{READ}:read"), "0.0.0.0") is None
