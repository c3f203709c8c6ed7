"""The assembled Neo4j server (ops/neo4j/server.sh): what it loads, what LOAD CSV may read,
and where its password goes.

The password checks read every process's command line from /proc while the real programs
run: the server `make test` started, and server.sh's first-start step on a fresh directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import cypher
from graph.config import Neo4jConfig

REPO = Path(__file__).resolve().parents[1]
SERVER_SH = REPO / "ops" / "neo4j" / "server.sh"


def allowed_procedures() -> list[str]:
    text = (REPO / "ops" / "neo4j" / "allowed-procedures").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def gds_calls_in_repo() -> set[str]:
    """Every gds.* procedure or function named in the statements neorag runs."""
    texts = [cypher.load(name) for name in cypher.names()]
    return {m for text in texts for m in re.findall(r"\bgds\.[A-Za-z0-9_.]+(?=\s*\()", text)}


def test_the_allowlist_is_exactly_what_neorag_calls() -> None:
    assert set(allowed_procedures()) == gds_calls_in_repo()


def _records(cfg: Neo4jConfig, query: str) -> list[dict[str, Any]]:
    from neo4j import GraphDatabase

    auth = (cfg.user, cfg.password.get_secret_value())
    with GraphDatabase.driver(cfg.uri, auth=auth) as driver:
        records, _, _ = driver.execute_query(query, database_=cfg.database)
    return [r.data() for r in records]


def test_the_running_server_loads_only_the_allowed_gds_calls(neo4j_config: Neo4jConfig) -> None:
    procedures = _records(neo4j_config, "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'gds.'")
    functions = _records(neo4j_config, "SHOW FUNCTIONS YIELD name WHERE name STARTS WITH 'gds.'")
    loaded = {r["name"] for r in procedures} | {r["name"] for r in functions}
    assert loaded == set(allowed_procedures())
    # The allowlist does not reach built-in procedures: schema introspection still works.
    assert _records(neo4j_config, "CALL db.labels() YIELD label RETURN count(*) AS n")
    assert _records(neo4j_config, "CALL dbms.components() YIELD name RETURN name")
    settings = {
        r["name"]: r["value"]
        for r in _records(
            neo4j_config,
            "SHOW SETTINGS YIELD name, value WHERE name STARTS WITH 'dbms.security.'",
        )
    }
    assert settings["dbms.security.allow_csv_import_from_file_urls"] == "false"


def _command_lines() -> dict[int, bytes]:
    lines = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines[int(entry.name)] = (entry / "cmdline").read_bytes()
            except OSError:
                continue  # the process ended meanwhile
    return lines


def test_the_servers_password_is_on_no_command_line(neo4j_config: Neo4jConfig) -> None:
    password = neo4j_config.password.get_secret_value().encode()
    assert password
    lines = _command_lines()
    assert any(b"CommunityEntryPoint" in line for line in lines.values()), "no local server"
    assert [pid for pid, line in lines.items() if password in line] == []


def _shiro_sha256(password: str, salt_hex: str, iterations: int) -> str:
    """The hash Neo4j stores in data/dbms/auth.ini: SHA-256 over salt + password, then
    hashed again `iterations - 1` times."""
    digest = hashlib.sha256(bytes.fromhex(salt_hex) + password.encode()).digest()
    for _ in range(iterations - 1):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def _set_initial_password(run_dir: Path, password: str | None) -> tuple[str, set[bytes]]:
    """Run `server.sh set-initial-password` on a fresh directory, reading every command line
    on the machine until it exits. Returns its output and the command lines seen."""
    env = {k: v for k, v in os.environ.items() if k != "NEO4J_PASSWORD"}
    env["NEO4J_RUN_DIR"] = str(run_dir)
    if password is not None:
        env["NEO4J_PASSWORD"] = password
    process = subprocess.Popen(
        [str(SERVER_SH), "set-initial-password"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    seen: set[bytes] = set()
    deadline = time.monotonic() + 180
    while process.poll() is None and time.monotonic() < deadline:
        seen.update(_command_lines().values())
        time.sleep(0.01)
    output = process.communicate(timeout=10)[0].decode(errors="replace")
    assert process.returncode == 0, output
    return output, seen


def _stored_hash_matches(run_dir: Path, password: str) -> bool:
    line = (run_dir / "data" / "dbms" / "auth.ini").read_text().strip()
    user, credential, _ = line.split(":")
    algorithm, digest, salt, iterations = credential.split(",")
    assert (user, algorithm) == ("neo4j", "SHA-256")
    return _shiro_sha256(password, salt, int(iterations)) == digest


@pytest.mark.slow
def test_a_chosen_password_reaches_neo4j_but_no_command_line(tmp_path: Path) -> None:
    password = "p@ss \"wo\\rd\" #x 'y' $HOME"  # quotes, backslash, comment and shell chars
    output, seen = _set_initial_password(tmp_path, password)
    assert [line for line in seen if password.encode() in line] == []
    args_file = str(tmp_path / "run" / "initial-password.args").encode()
    assert any(b"@" + args_file in line for line in seen), "AdminTool was never seen running"
    assert password not in output
    assert _stored_hash_matches(tmp_path, password)
    assert not (tmp_path / "run" / "initial-password.args").exists()
    conf = _conf(tmp_path)  # the neo4j.conf server.sh wrote on the way
    listed = ",".join(allowed_procedures())
    assert conf["dbms.security.procedures.allowlist"] == listed
    assert conf["dbms.security.procedures.unrestricted"] == listed
    assert conf["dbms.security.allow_csv_import_from_file_urls"] == "false"
    assert conf["server.default_listen_address"] == "127.0.0.1"


def _conf(run_dir: Path) -> dict[str, str]:
    lines = (run_dir / "conf" / "neo4j.conf").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and line[0] != "#")


@pytest.mark.slow
def test_a_generated_password_is_private_and_never_shown(tmp_path: Path) -> None:
    output, seen = _set_initial_password(tmp_path, None)
    password_file = tmp_path / "password"
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    password = password_file.read_text()
    assert len(password) == 20 and password.isalnum()
    assert password not in output
    assert [line for line in seen if password.encode() in line] == []
    assert _stored_hash_matches(tmp_path, password)


def test_readiness_gives_up_as_soon_as_the_server_has_exited(tmp_path: Path) -> None:
    """`make test` waits up to 240 s for a starting server; one that died (a bad setting,
    a port taken by the time the JVM binds it) is reported at once, with the reason."""
    import socket
    import sys

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    (tmp_path / "password").write_text("secret")
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "neo4j.pid").write_text(str(dead.pid))
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "ops/neo4j/wait_ready.py"),
            f"bolt://127.0.0.1:{port}",
            str(tmp_path / "password"),
            "240",
            str(tmp_path / "neo4j.pid"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "exited while starting" in done.stderr
    assert time.monotonic() - started < 30
