"""Clear errors from real servers: a wrong password, nothing listening, and a Neo4j that
runs without the GDS plugin (a second, throwaway server started here from the same jars
`make neo4j-start` uses, minus plugins/).

Every message must be one line, name the fix, and never contain a password; the CLI must
print it as `error: ...` and exit with status 2, without a traceback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from pydantic import SecretStr
from typer.testing import CliRunner

from app.cli import app
from graph.config import Neo4jConfig
from graph.errors import BackendAuthError, BackendUnavailable, GdsMissing
from graph.neo4j.connection import connect
from graph.neo4j.store import Neo4jStore

REPO = Path(__file__).resolve().parents[2]
CLOSED_PORT_URI = "bolt://127.0.0.1:1"  # what a stopped server looks like


def _one_line(message: str) -> str:
    assert message and "\n" not in message, repr(message)
    return message


@pytest.fixture()
def wrong_password(neo4j_config: Neo4jConfig) -> Iterator[str]:
    """A password the server rejects. A good login afterwards resets Neo4j's failed-attempt
    counter, so these tests never lock the shared `neo4j` user for other tests."""
    yield f"wrong-{uuid.uuid4().hex}"
    driver, _ = connect(neo4j_config)
    driver.close()


def test_wrong_password_is_one_line_naming_the_fix(
    neo4j_config: Neo4jConfig, wrong_password: str
) -> None:
    cfg = neo4j_config.model_copy(update={"password": SecretStr(wrong_password)})
    with pytest.raises(BackendAuthError) as caught:
        Neo4jStore(cfg, "default")
    message = _one_line(str(caught.value))
    assert "NEO4J_PASSWORD" in message and cfg.uri in message
    assert wrong_password not in message
    assert neo4j_config.password.get_secret_value() not in message


def test_closed_port_is_backend_unavailable() -> None:
    cfg = Neo4jConfig(uri=CLOSED_PORT_URI, password=SecretStr("never-shown-1234"))
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as caught:
        Neo4jStore(cfg, "default")
    message = _one_line(str(caught.value))
    assert CLOSED_PORT_URI in message and "make neo4j-start" in message
    assert "never-shown-1234" not in message
    assert time.monotonic() - started < cfg.connection_timeout + 5


def _cli_status(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, uri: str, password: str) -> str:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("NEORAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NEO4J_URI", uri)
    monkeypatch.setenv("NEO4J_USER", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", password)
    result = CliRunner().invoke(app, ["status", "--backend", "neo4j"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    line = _one_line(result.stderr.rstrip("\n"))
    assert line.startswith("error: ")
    assert password not in result.output
    return line


def test_cli_status_wrong_password(
    neo4j_config: Neo4jConfig,
    wrong_password: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    line = _cli_status(monkeypatch, tmp_path, neo4j_config.uri, wrong_password)
    assert "rejected user 'neo4j'" in line and "NEO4J_PASSWORD" in line


def test_cli_status_server_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    line = _cli_status(monkeypatch, tmp_path, CLOSED_PORT_URI, "never-shown-1234")
    assert "cannot reach Neo4j" in line and "make neo4j-start" in line


# ---- a real Neo4j without GDS ----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _neo4j_home() -> Path:
    """The jars `make neo4j-start` runs (cached; assemble.sh only downloads on a cold cache)."""
    done = subprocess.run(
        [str(REPO / "ops" / "neo4j" / "assemble.sh")], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        pytest.fail(f"cannot assemble Neo4j: {done.stderr.strip()[-500:]}", pytrace=False)
    return Path(done.stdout.strip().splitlines()[-1])


def _write_conf(run: Path, bolt_port: int) -> None:
    for sub in ("conf", "data", "logs", "import", "run", "plugins"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    settings = {
        "server.default_listen_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{bolt_port}",
        "server.bolt.advertised_address": f"127.0.0.1:{bolt_port}",
        "server.http.enabled": "false",
        "server.https.enabled": "false",
        "server.directories.data": run / "data",
        "server.directories.logs": run / "logs",
        "server.directories.import": run / "import",
        "server.directories.run": run / "run",
        "server.directories.plugins": run / "plugins",  # empty: no GDS
        "server.memory.heap.initial_size": "512m",
        "server.memory.heap.max_size": "512m",
        "server.memory.pagecache.size": "32m",
        "dbms.security.auth_enabled": "false",
        "dbms.usage_report.enabled": "false",
    }
    text = "".join(f"{key}={value}\n" for key, value in settings.items())
    (run / "conf" / "neo4j.conf").write_text(text)


def _wait_for_bolt(uri: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with GraphDatabase.driver(uri, auth=("neo4j", "")) as driver:
                driver.execute_query("RETURN 1", database_="neo4j")
                return
        except Exception:  # still starting: Bolt closed or the database not yet online
            time.sleep(0.5)
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else "(no log)"
    pytest.fail(f"Neo4j without GDS did not start at {uri}:\n{tail}", pytrace=False)


@pytest.fixture()
def neo4j_without_gds(tmp_path: Path) -> Iterator[str]:
    """A real Neo4j 5.26 server with an empty plugins folder and only Neo4j's own jars on
    the classpath; stopped (by its pid) when the test ends."""
    if os.environ.get("NEORAG_SKIP_NEO4J") == "1":
        pytest.skip("NEORAG_SKIP_NEO4J=1: Neo4j-backed test skipped")
    home = _neo4j_home()
    run = tmp_path / "neo4j-no-gds"
    port = _free_port()
    _write_conf(run, port)
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else "java"
    log = run / "logs" / "console.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                java,
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/java.lang=ALL-UNNAMED",
                "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp",
                f"{home}/lib/*",
                "org.neo4j.server.CommunityEntryPoint",
                f"--home-dir={run}",
                f"--config-dir={run / 'conf'}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NEO4J_HOME": str(run), "NEO4J_CONF": str(run / "conf")},
        )
    uri = f"bolt://127.0.0.1:{port}"
    try:
        _wait_for_bolt(uri, proc, log, timeout=50)
        yield uri
    finally:
        proc.kill()  # its data dies with the test's folder: no clean shutdown to wait for
        proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.neo4j
def test_server_without_gds_is_gds_missing(neo4j_without_gds: str) -> None:
    cfg = Neo4jConfig(uri=neo4j_without_gds, password=SecretStr("unused-auth-disabled"))
    with pytest.raises(GdsMissing) as caught:
        Neo4jStore(cfg, "default")
    message = _one_line(str(caught.value))
    assert "Graph Data Science" in message and "GDS" in message
    assert "gds.*" in message and neo4j_without_gds in message
