"""A throwaway Neo4j + GDS server a test may kill and restart: the same jars, scripts and
readiness check as `make test`, in a folder of the test's own and on free ports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "ops" / "neo4j" / "server.sh"
WAIT_READY = REPO / "ops" / "neo4j" / "wait_ready.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ThrowawayNeo4j:
    run_dir: Path
    bolt_port: int
    http_port: int

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def password(self) -> str:
        return (self.run_dir / "password").read_text().strip()

    def _env(self) -> dict[str, str]:
        """server.sh's environment; without NEO4J_PASSWORD it generates a password file."""
        inherited = {k: v for k, v in os.environ.items() if k != "NEO4J_PASSWORD"}
        return {
            **inherited,
            "NEO4J_RUN_DIR": str(self.run_dir),
            "NEO4J_BOLT_PORT": str(self.bolt_port),
            "NEO4J_HTTP_PORT": str(self.http_port),
            "NEO4J_HEAP": os.environ.get("NEORAG_FAULT_NEO4J_HEAP", "768m"),
            "NEO4J_PAGECACHE": "128m",
            # a server that lives for one test: the quick JIT alone costs half the CPU
            # of a start, which the other test processes share
            "NEO4J_JAVA_OPTS": "-XX:TieredStopAtLevel=1",
        }

    def start(self, timeout: float = 300) -> None:
        started = subprocess.run(
            [str(SERVER), "start"], env=self._env(), capture_output=True, text=True, timeout=900
        )
        if started.returncode != 0:
            pytest.fail(f"cannot start Neo4j: {started.stderr[-1500:]}", pytrace=False)
        ready = subprocess.run(
            [
                sys.executable,
                str(WAIT_READY),
                self.uri,
                str(self.run_dir / "password"),
                str(timeout),
            ],
            capture_output=True,
            text=True,
            timeout=timeout + 60,
        )
        if ready.returncode != 0:
            log = self.run_dir / "logs" / "neo4j.log"
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            pytest.fail(f"Neo4j not ready: {ready.stderr.strip()}\n{tail}", pytrace=False)

    def pid(self) -> int | None:
        pidfile = self.run_dir / "neo4j.pid"
        return int(pidfile.read_text()) if pidfile.exists() else None

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        pid = self.pid()
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        (self.run_dir / "neo4j.pid").unlink(missing_ok=True)

    def stop(self) -> None:
        subprocess.run([str(SERVER), "stop"], env=self._env(), capture_output=True, timeout=120)


def throwaway_neo4j(tmp_path: Path) -> ThrowawayNeo4j:
    if os.environ.get("NEORAG_SKIP_NEO4J") == "1":
        pytest.skip("NEORAG_SKIP_NEO4J=1: Neo4j-backed test skipped")
    server = ThrowawayNeo4j(tmp_path / "neo4j", free_port(), free_port())
    server.start()
    return server
