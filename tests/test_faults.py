"""The fault suite: what a shared server and a full disk do to neorag, for real.

- Neo4j SIGKILLed during an ingest and queries: one clear error from the ingest, then a
  re-run gives exactly the graph of an uninterrupted ingest; one-line errors from the
  queries during the outage, answers again afterwards from the same engine (no restart).
- The disk fills under the embedded store (RLIMIT_FSIZE): a clear error, and the store
  still opens with whole documents only; a re-run finishes the job exactly.
- Two ingests with different data dirs into one Neo4j collection: serialised by the lock
  held in the database.

The server killed here is a throwaway one (tests/neo4j_server.py), one for the module,
never the shared test server; the lock test only writes its own fresh collection there.
Only what a test breaks runs as a process of its own: the corpora the faults meet are
ingested in this process.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from app.cli import app
from app.engine import Engine
from app.services import index_dir, open_store, store_path
from app.settings import Settings
from graph.config import Neo4jConfig
from graph.embedded.store import EmbeddedStore
from graph.errors import NeoragError
from graph.neo4j.store import Neo4jStore
from ingest.runner import run_ingest
from tests.conftest import DATASETS, fresh_collection, shared_models
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot
from tests.neo4j_server import ThrowawayNeo4j, throwaway_neo4j

pytestmark = [pytest.mark.faults, pytest.mark.slow]
PASSAGES = 48
KILLED_PASSAGES = 24  # three batches: the kill comes after the first is written
BATCH = 8
DOWN_AFTER = 1.0  # seconds to wait for the killed server: the outage is known at once
REPO = Path(__file__).resolve().parents[1]


def corpus(folder: Path, passages: int = PASSAGES) -> Path:
    lines = (DATASETS / "2wiki-dev" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(lines[:passages]) + "\n", encoding="utf-8")
    return folder


def cli_env(data_dir: Path, collection: str, server: ThrowawayNeo4j | None = None, **extra: str):
    env = {
        **os.environ,
        "NEORAG_DATA_DIR": str(data_dir),
        "NEORAG_COLLECTION": collection,
        "NEORAG_INGEST__BATCH_DOCUMENTS": str(BATCH),
        "NEORAG_BACKEND": "embedded",
        **extra,
    }
    if server is not None:
        env.update(
            NEORAG_BACKEND="neo4j",
            NEO4J_URI=server.uri,
            NEO4J_USER="neo4j",
            NEO4J_PASSWORD=server.password,
            NEO4J_CONNECTION_TIMEOUT=str(DOWN_AFTER),
        )
    return env


def ingest(root: Path, env: dict[str, str], **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "ingest", str(root), "--json"],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if condition():
            return
        time.sleep(0.1)
    if proc.poll() is not None:
        _, err = proc.communicate()
        pytest.fail(f"the ingest ended before the fault: {err[-1500:]}")
    pytest.fail("the ingest made no progress")


def config(server: ThrowawayNeo4j) -> Neo4jConfig:
    return Neo4jConfig(uri=server.uri, password=SecretStr(server.password))


def documents_on(server: ThrowawayNeo4j, collection: str) -> Callable[[], int]:
    def count() -> int:
        try:
            with Neo4jStore(config(server), collection) as store:
                return store.status().documents
        except NeoragError:
            return 0

    return count


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{stderr[-3000:]}"
    assert lines[0].startswith("error: ") and "Traceback" not in stderr
    return lines[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThrowawayNeo4j]:
    """One throwaway server for the module: each test kills and restarts it, in a
    collection of its own."""
    neo4j = throwaway_neo4j(tmp_path_factory.mktemp("faults"))
    try:
        yield neo4j
    finally:
        neo4j.kill()  # its data dies with the test's folder: no clean shutdown to wait for


def run_in_process(root: Path, settings: Settings) -> None:
    """An ingest in this process, whose models are loaded once for the session: where a
    test needs a stored corpus, not a process to break."""
    with open_store(settings, create=True) as store:
        run_ingest(
            root,
            store,
            settings.ingest.model_copy(update={"batch_documents": BATCH}),
            settings.algorithms,
            index_dir(settings),
            models=shared_models(),
        )


def server_settings(server: ThrowawayNeo4j, data_dir: Path, collection: str) -> Settings:
    return Settings(
        backend="neo4j",
        data_dir=data_dir,
        collection=collection,
        neo4j_uri=server.uri,
        neo4j_password=SecretStr(server.password),
        neo4j_connection_timeout=DOWN_AFTER,
    )


@pytest.mark.neo4j
def test_neo4j_killed_during_an_ingest_and_queries(server: ThrowawayNeo4j, tmp_path: Path) -> None:
    """One kill of the server meets both an ingest (one clear error; a re-run then gives the
    graph of an uninterrupted ingest) and an engine answering queries (one-line errors while
    it is down, answers again from the same engine once it is back)."""
    settings = server_settings(server, tmp_path / "data-q", "queries")
    run_in_process(corpus(tmp_path / "asked", 16), settings)
    engine = Engine(settings)
    outcomes: list[str] = []

    def ask() -> None:
        try:
            engine.refresh()
            result = engine.retriever("tigrag").retrieve("Who directed the film?")
            outcomes.append("ok" if result.ranking else "empty")
        except NeoragError as exc:
            message = str(exc)
            assert "\n" not in message and "Traceback" not in message
            outcomes.append(f"error: {message}")

    root = corpus(tmp_path / "docs", KILLED_PASSAGES)
    collection = "killed"
    want = uninterrupted_snapshot(root, tmp_path, collection)
    env = cli_env(tmp_path / "data", collection, server)
    try:
        for _ in range(3):
            ask()
        assert outcomes == ["ok"] * 3
        proc = ingest(root, env)
        count = documents_on(server, collection)
        wait_for(lambda: count() >= BATCH, proc, timeout=600)
        server.kill()
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 2
        line = one_error_line(err)
        assert f"cannot reach Neo4j at {server.uri}" in line, line
        for _ in range(2):
            ask()
        down = outcomes[3:]
        assert all(o.startswith("error: ") for o in down), down
        assert all("cannot reach Neo4j" in o for o in down), down

        server.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and outcomes[-1] != "ok":
            ask()
        assert outcomes[-1] == "ok", outcomes[-5:]  # the same engine answers again
    finally:
        engine.close()
    run_in_process(root, server_settings(server, tmp_path / "data", collection))
    with Neo4jStore(config(server), collection) as store:
        assert_same_graph(store.snapshot(), want)


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_disk_full_under_the_embedded_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = Settings(backend="embedded", data_dir=data)
    db = store_path(settings)
    root = corpus(tmp_path / "docs", PASSAGES // 2)
    run_in_process(root, settings)
    size = db.stat().st_size

    # the corpus grows to twice its size; files are capped a little above the store's size
    corpus(root, PASSAGES)
    full = ingest(root, cli_env(data, "default"), preexec_fn=_limit_file_size(size + 64 * 1024))
    _, err = full.communicate(timeout=900)
    assert full.returncode == 2, err[-2000:]
    line = one_error_line(err)
    assert "disk" in line.lower() or "space" in line.lower() or "file size" in line.lower(), line

    with EmbeddedStore(db) as store:  # opens, consistent, whole documents only
        assert store._rows("PRAGMA integrity_check") == [("ok",)]
        chunks = store.snapshot().chunks
        stored = store.documents()
    assert PASSAGES // 2 <= len(stored) < PASSAGES
    per_doc: dict[str, int] = {}
    for doc_id, _ in chunks.values():
        per_doc[doc_id] = per_doc.get(doc_id, 0) + 1
    assert set(per_doc) == set(stored)

    run_in_process(root, settings)  # space again: the re-run finishes the job exactly
    with EmbeddedStore(db) as store:
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, "default"))


@pytest.mark.neo4j
def test_two_data_dirs_one_neo4j_collection_are_serialised(
    neo4j_config: Neo4jConfig, tmp_path: Path
) -> None:
    root = corpus(tmp_path / "docs", 2 * BATCH)
    collection = fresh_collection()
    base = {
        "NEO4J_URI": neo4j_config.uri,
        "NEO4J_USER": neo4j_config.user,
        "NEO4J_PASSWORD": neo4j_config.password.get_secret_value(),
    }
    env_a = cli_env(tmp_path / "a", collection, NEORAG_BACKEND="neo4j", **base)
    env_b = cli_env(tmp_path / "b", collection, NEORAG_BACKEND="neo4j", **base)
    runner = CliRunner()
    first = ingest(root, env_a)
    try:

        def started() -> bool:
            with Neo4jStore(neo4j_config, collection, allow_legacy=True) as store:
                return store.status().documents > 0

        wait_for(started, first, timeout=600)
        # Paused while it holds the lock, so the second ingest meets it however fast the
        # first would have finished; the lock is an open transaction, which a pause keeps.
        os.kill(first.pid, signal.SIGSTOP)
        try:
            second = runner.invoke(app, ["ingest", str(root), "--json"], env=env_b)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert second.exit_code == 3, second.output[-2000:]
        assert "another ingest into collection" in second.output
        assert second.exception is None or isinstance(second.exception, SystemExit)
        out, err = first.communicate(timeout=900)
        assert first.returncode == 0, err[-2000:]
        assert json.loads(out)["documents"]["new"] == 2 * BATCH
        third = runner.invoke(app, ["ingest", str(root), "--json"], env=env_b)  # now free
        assert third.exit_code == 0, third.output[-2000:]
        assert json.loads(third.stdout)["documents"]["unchanged"] == 2 * BATCH
    finally:
        if first.poll() is None:
            first.kill()
        with Neo4jStore(neo4j_config, collection, allow_legacy=True) as store:
            store.clear()
