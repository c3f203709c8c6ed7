"""The harness claims of the README's *Two commands*: `make test` fails fast and says why
when Neo4j cannot start, and a fresh clone on a warm machine installs nothing again and
has an environment of its own. Each test starts what it needs in a temporary directory;
the suite's own Neo4j (`.neo4j/test`) is never touched."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
SHORT_PYTEST = ["--collect-only", "-q", "tests/ids.py"]  # what ops/test.sh would run
CONFORMANCE = "tests/graph/test_conformance.py"  # a file of tests run on both backends


def _make_test(
    env: dict[str, str], run_dir: Path, pytest_args: list[str] = SHORT_PYTEST
) -> tuple[subprocess.CompletedProcess, float]:
    """`ops/test.sh` (what `make test` runs) with `env` over this process's environment,
    whose own NEORAG_SKIP_NEO4J is left out: only `env` may opt out."""
    inherited = {k: v for k, v in os.environ.items() if k != "NEORAG_SKIP_NEO4J"}
    full = {**inherited, **env, "NEORAG_TEST_RUN_DIR": str(run_dir)}
    started = time.monotonic()
    done = subprocess.run(
        ["ops/test.sh", *pytest_args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done, time.monotonic() - started


def test_a_taken_port_fails_fast_and_says_why(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            http = free.getsockname()[1]
        done, seconds = _make_test(
            {"NEORAG_TEST_BOLT_PORT": str(port), "NEORAG_TEST_HTTP_PORT": str(http)},
            tmp_path / "neo4j",
        )
    assert done.returncode == 1, done.stdout[-2000:]
    assert "could not start Neo4j + GDS" in done.stderr
    assert "Address already in use" in done.stderr  # the reason, in one line
    assert "NEORAG_SKIP_NEO4J=1 make test" in done.stderr  # and the opt-out
    assert "collected" not in done.stdout  # no test ran as if the database were there
    assert seconds < 60  # seen before the JVM starts, not waited out (timeout 240 s)
    assert not (tmp_path / "neo4j" / "neo4j.pid").exists()  # and nothing is left running


def test_a_taken_default_port_is_moved_past(tmp_path: Path) -> None:
    """Without NEORAG_TEST_*_PORT, a default test port another server holds (a second
    clone's `make test`, a benchmark's server) is not a failure: the suite's server takes a
    free port and the run goes on."""
    env = {k: "" for k in ("NEORAG_TEST_BOLT_PORT", "NEORAG_TEST_HTTP_PORT")}
    with socket.socket() as bolt, socket.socket() as http:
        for sock, port in ((bolt, 7688), (http, 7475)):
            try:  # held here unless a server (this suite's own) holds it already
                sock.bind(("127.0.0.1", port))
                sock.listen(1)
            except OSError:
                pass
        one = "tests/graph/test_token_mirror.py::test_above_the_size_limit_gds_runs_it"
        done, _ = _make_test(env, tmp_path / "neo4j", ["-q", "-p", "no:cacheprovider", one])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Neo4j-backed tests: 1 (1 passed)" in done.stdout
    assert not (tmp_path / "neo4j" / "neo4j.pid").exists()


def test_a_wrong_java_fails_and_says_why(tmp_path: Path) -> None:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    java.chmod(0o755)
    done, _ = _make_test({"JAVA_HOME": str(tmp_path / "jdk")}, tmp_path / "neo4j")
    assert done.returncode == 1
    assert "needs Java 17 or 21" in done.stderr and "11.0.2" in done.stderr
    assert "NEORAG_SKIP_NEO4J=1 make test" in done.stderr


def test_the_opt_out_reports_neo4j_tests_as_skipped_never_passed(tmp_path: Path) -> None:
    """`NEORAG_SKIP_NEO4J=1 make test`: the Neo4j-backed tests are skipped, said so, and
    counted in the closing summary as skipped; the embedded half of the same tests runs."""
    done, _ = _make_test(
        {"NEORAG_SKIP_NEO4J": "1"}, tmp_path / "n", ["-q", "-p", "no:cacheprovider", CONFORMANCE]
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Neo4j-backed tests are skipped (and not counted as passing)" in done.stdout
    summary = re.search(r"Neo4j-backed tests: (\d+) \((\d+) skipped\)", done.stdout)
    assert summary is not None, done.stdout[-2000:]  # skipped only: none passed or failed
    assert int(summary[1]) == int(summary[2]) > 0
    assert " passed" in done.stdout  # the embedded tests of the same file did run
    assert not (tmp_path / "n").exists()  # and no server was started


def test_the_cache_folder_follows_neorag_cache(tmp_path: Path) -> None:
    """The README's `NEORAG_CACHE` moves the caches, as `make CACHE=…` does."""
    planned = _make(ROOT, "-n", "deps", env={"NEORAG_CACHE": str(tmp_path / "cache")})
    assert str(tmp_path / "cache" / "deps-") in planned, planned[-2000:]


def _clone(to: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(to)], check=True, timeout=300)
    return to


def _make(checkout: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=checkout,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _where(checkout: Path, module: str) -> Path:
    """Where the checkout's venv imports `module` from (isolated: not from the cwd)."""
    code = f"import {module}; print({module}.__file__)"
    out = subprocess.run(
        [str(checkout / ".venv/bin/python"), "-I", "-c", code],
        cwd=checkout.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(out.strip()).resolve()


def test_a_fresh_clone_on_a_warm_machine_installs_nothing_again(tmp_path: Path) -> None:
    first, second = _clone(tmp_path / "one"), _clone(tmp_path / "two")
    planned = _make(first, "-n", "install")
    assert "requirements.lock" not in planned  # the cached dependencies are used as they are
    for checkout in (first, second):
        _make(checkout, "install")
        assert "Nothing to be done" in _make(checkout, "-n", "install")  # and then nothing
    # each clone runs its own code, over the one cached dependency environment
    assert _where(first, "app").is_relative_to(first.resolve())
    assert _where(second, "app").is_relative_to(second.resolve())
    cache = _where(first, "neo4j")
    assert cache == _where(second, "neo4j") and not cache.is_relative_to(tmp_path.resolve())
