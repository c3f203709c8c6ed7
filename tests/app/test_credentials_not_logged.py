"""README, The Neo4j backend: "Credentials come only from the environment (`NEO4J_URI`,
`NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE`, or `.env`) and are never logged", and
API keys: "Keys never appear in logs, errors or `/metrics`".

Distinctive secrets go into the environment (the Neo4j password, API keys, the chat
model's key); then the code paths that read configuration or try a connection run without
a reachable database, with every logger at DEBUG into pytest's caplog (also loggers that do
not propagate) and stdout/stderr captured: settings as loaded and shown, `neorag status` and
`neorag ingest` against Neo4j, the driver connecting to a closed port and to a local
listener that takes the credentials and hangs up or refuses them, and the HTTP API asked
with no key, a wrong key and a right key. No secret may appear in a log record, an output,
a response or a file the run wrote. The listener also proves the password really was
sent, so the connection path was exercised, not skipped.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.api.server import create_app
from app.cli import app as cli
from app.settings import load_settings
from graph.errors import BackendAuthError, BackendUnavailable
from graph.neo4j.connection import connect

PASSWORD = "neo4j-pw-Canary-4417"
READ_KEY = "api-read-Canary-9032"
ADMIN_KEY = "api-admin-Canary-2218"
WRONG_KEY = "api-wrong-Canary-0000"  # a key a client tried: a credential too
LLM_KEY = "sk-llm-Canary-6650"
SECRETS = (PASSWORD, READ_KEY, ADMIN_KEY, WRONG_KEY, LLM_KEY)


# ---- a local listener that speaks just enough Bolt to be sent the credentials ----------


def _string(text: str) -> bytes:
    data = text.encode()
    return (bytes([0x80 + len(data)]) if len(data) < 16 else bytes([0xD0, len(data)])) + data


def _message(signature: int, fields: dict[str, str]) -> bytes:
    """One chunked Bolt message whose single field is a map of strings."""
    body = bytes([0xB1, signature, 0xA0 + len(fields)])
    body += b"".join(_string(k) + _string(v) for k, v in fields.items())
    return len(body).to_bytes(2, "big") + body + b"\x00\x00"


SUCCESS, FAILURE = 0x70, 0x7F
HELLO_OK = _message(SUCCESS, {"server": "Neo4j/5.26.0", "connection_id": "bolt-1"})
UNAUTHORIZED = _message(
    FAILURE,
    {
        "code": "Neo.ClientError.Security.Unauthorized",
        "message": "The client is unauthorized due to authentication failure.",
    },
)


class BoltListener:
    """127.0.0.1:<port>: answers the handshake with Bolt 5.4, reads the HELLO and LOGON the
    driver sends, then hangs up (`refuse=False`) or answers HELLO with SUCCESS and LOGON
    with Unauthorized, as a server does for a wrong password."""

    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.received = bytearray()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            with conn, contextlib.suppress(OSError):
                self._session(conn)

    def _session(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        handshake = b""
        while len(handshake) < 20:
            part = conn.recv(20 - len(handshake))
            if not part:
                return
            handshake += part
        conn.sendall(b"\x00\x00\x04\x05")
        data = bytearray()
        deadline = time.monotonic() + 5
        while PASSWORD.encode() not in data and time.monotonic() < deadline:
            part = conn.recv(65536)
            if not part:
                break
            data += part
        self.received += data
        if self.refuse:
            conn.sendall(HELLO_OK + UNAUTHORIZED)
            time.sleep(0.2)  # let the driver read the failure before the socket closes

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.server.close()


@pytest.fixture(params=["hangs-up", "refuses"])
def listener(request: pytest.FixtureRequest) -> Iterator[BoltListener]:
    server = BoltListener(refuse=request.param == "refuses")
    yield server
    server.close()


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return int(s.getsockname()[1])


# ---- capture: every logger at DEBUG, the environment holding the secrets ---------------


@pytest.fixture()
def every_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog at DEBUG on the root and on every logger that exists, with its handler also on
    loggers that do not propagate; `capture_all()` does it again for loggers created later
    (the app's)."""
    attached: list[logging.Logger] = []

    def capture_all() -> None:
        caplog.set_level(logging.DEBUG)
        for name, logger in list(logging.root.manager.loggerDict.items()):
            if not isinstance(logger, logging.Logger):
                continue
            caplog.set_level(logging.DEBUG, logger=name)
            if not logger.propagate and caplog.handler not in logger.handlers:
                logger.addHandler(caplog.handler)
                attached.append(logger)

    caplog.capture_all = capture_all  # type: ignore[attr-defined]
    capture_all()
    yield caplog
    for logger in attached:
        logger.removeHandler(caplog.handler)


@pytest.fixture()
def secret_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The secrets in the environment as a deployment sets them; a tmp working directory
    (no `.env`) and data dir. Returns the data dir."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    env = {
        "NEORAG_DATA_DIR": str(data),
        "NEORAG_BACKEND": "neo4j",
        "NEO4J_URI": f"bolt://127.0.0.1:{closed_port()}",
        "NEO4J_USER": "neo4j",
        "NEO4J_PASSWORD": PASSWORD,
        "NEO4J_DATABASE": "neo4j",
        "NEORAG_API__KEYS": f"{READ_KEY}:read,{ADMIN_KEY}",
        "NEORAG_LLM__PROVIDER": "openai",
        "NEORAG_LLM__API_KEY": LLM_KEY,
    }
    for name in ("NEO4J_GDS_URI", "NEORAG_NEO4J_URI", "NEORAG_NEO4J_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return data


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        leaked = [s for s in SECRETS if s in text]
        assert not leaked, f"{leaked} in: {text[:2000]}"


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Everything the captured records say: message, arguments, traceback, extras."""
    texts = [caplog.text]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), repr(vars(record))]
        if record.exc_info and record.exc_info[1] is not None:
            texts.append(repr(record.exc_info[1]))
    return texts


def written(folder: Path) -> list[str]:
    """The text of every file a run left under `folder` (run log, job files, ...)."""
    if not folder.exists():
        return []
    return [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]


# ---- the tests ---------------------------------------------------------------------------


def test_settings_as_loaded_and_shown_hold_no_secret(
    secret_env: Path, every_log: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings()
    # the secrets were read from the environment (else this test proves nothing)
    assert settings.neo4j.password.get_secret_value() == PASSWORD
    assert {k.secret for k in settings.api.api_keys()} == {READ_KEY, ADMIN_KEY}
    assert settings.llm.api_key.get_secret_value() == LLM_KEY
    shown = [
        repr(settings),
        str(settings),
        repr(settings.neo4j),
        str(settings.redacted()),
        settings.model_dump_json(),
        settings.neo4j.model_dump_json(),
        repr(settings.api.api_keys()),
    ]
    out = capsys.readouterr()
    assert_no_secret(*shown, *logged(every_log), out.out, out.err)


def test_connecting_to_a_closed_port_names_no_secret(
    secret_env: Path, every_log: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings()
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as info:
        connect(settings.neo4j)
    assert time.monotonic() - started < 30
    assert "cannot reach Neo4j" in str(info.value)
    assert any(r.name.startswith("neo4j") for r in every_log.records), "driver logs captured"
    out = capsys.readouterr()
    assert_no_secret(str(info.value), repr(info.value), *logged(every_log), out.out, out.err)


def test_the_driver_sends_the_password_and_nothing_logs_it(
    secret_env: Path,
    listener: BoltListener,
    monkeypatch: pytest.MonkeyPatch,
    every_log: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NEO4J_URI", listener.uri)
    settings = load_settings()
    expected = BackendAuthError if listener.refuse else BackendUnavailable
    with pytest.raises(expected) as info:
        connect(settings.neo4j)
    assert PASSWORD.encode() in listener.received, "the credentials were sent"
    assert any("LOGON" in r.getMessage() for r in every_log.records), "driver debug captured"
    out = capsys.readouterr()
    assert_no_secret(str(info.value), repr(info.value), *logged(every_log), out.out, out.err)


def test_cli_against_unreachable_and_refusing_neo4j_prints_and_logs_no_secret(
    secret_env: Path,
    listener: BoltListener,
    monkeypatch: pytest.MonkeyPatch,
    every_log: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    outputs = []
    for uri in (f"bolt://127.0.0.1:{closed_port()}", listener.uri):
        monkeypatch.setenv("NEO4J_URI", uri)
        for args in (["status"], ["ingest", str(docs)], ["collections"]):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 2, (args, result.output)
            assert "error:" in result.output
            outputs.append(result.output)
    assert PASSWORD.encode() in listener.received
    out = capsys.readouterr()
    assert_no_secret(*outputs, *logged(every_log), out.out, out.err, *written(secret_env))


def test_api_with_wrong_and_right_keys_logs_no_secret(
    secret_env: Path,
    listener: BoltListener,
    monkeypatch: pytest.MonkeyPatch,
    every_log: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The app as `neorag api` builds it from the environment (in-process queries, no
    lifespan: no warm-up), over a Neo4j that hangs up or refuses the password."""
    monkeypatch.setenv("NEO4J_URI", listener.uri)
    app = create_app(load_settings())
    every_log.capture_all()  # type: ignore[attr-defined]  # loggers the app created
    client = TestClient(app)
    seen = []
    for headers, status in (
        ({}, 401),
        ({"Authorization": f"Bearer {WRONG_KEY}"}, 401),
        ({"Authorization": WRONG_KEY}, 401),
        ({"Authorization": f"Bearer {READ_KEY}"}, 503),
        ({"Authorization": f"Bearer {ADMIN_KEY}"}, 503),
    ):
        for route in ("/v1/status", "/v1/documents", "/v1/collections"):
            r = client.get(route, headers=headers)
            assert r.status_code == status, (route, headers, r.text)
            seen.append(r.text + repr(dict(r.headers)))
    r = client.post(
        "/v1/ingest", json={"path": "/etc"}, headers={"Authorization": f"Bearer {READ_KEY}"}
    )
    assert r.status_code == 403
    seen.append(r.text)
    seen.append(client.get("/metrics").text)
    assert PASSWORD.encode() in listener.received, "the API process sent the credentials"
    out = capsys.readouterr()
    assert_no_secret(*seen, *logged(every_log), out.out, out.err, *written(secret_env))
