"""Crash safety with real process kills: SIGKILL the `neorag ingest` process at random
points, re-run it, and the graph equals an uninterrupted ingest (no weight counted twice).
The ingests run with two worker processes (ingest.parallel): a kill of the writer leaves no
worker behind, a killed worker stops the ingest with one error line, Ctrl-C stops them all."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.services import store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from tests.conftest import DATASETS
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot
from tests.ingest.processes import spawned_workers, wait_gone

pytestmark = pytest.mark.slow
PASSAGES = 240
BATCH = 8
KILLS = 4
WORKERS = 2


def corpus(tmp_path: Path, passages: int = PASSAGES) -> Path:
    source = DATASETS / "2wiki-dev" / "corpus.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:passages]
    path = tmp_path / "corpus" / "corpus.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.parent


def ingest_process(
    root: Path, env: dict[str, str], *, new_session: bool = False
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "ingest", str(root), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=new_session,
        # As a terminal's foreground job: a shell starts background jobs (`make test &`)
        # with SIGINT ignored, and the child would inherit that.
        preexec_fn=_interruptible if new_session else None,
    )


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(condition, proc: subprocess.Popen[bytes], what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the ingest ended before {what}: {proc.stderr.read()!r}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def documents_in(store) -> int:
    return store.status().documents


def kill_and_resume(root: Path, env: dict[str, str], count_docs, seed: int) -> list[int]:
    """Kill the ingest KILLS times at random points, then let it finish; returns how many
    documents were stored at each kill. Points are chosen by progress, not by the clock
    (a busy machine would otherwise kill every run before it wrote anything): a random
    document count mid-ingest, and once a random moment after the last document (during
    the chunk-edge, analytics and index stages). Mid-ingest targets stay in the first
    three quarters: the writer can land a few batches between two polls, and a target one
    batch from the end was overrun in CI."""
    rng = random.Random(seed)
    targets = [*sorted(rng.sample(range(BATCH, PASSAGES * 3 // 4), KILLS - 1)), PASSAGES]
    seen = []
    for target in targets:
        proc = ingest_process(root, env)
        while proc.poll() is None and count_docs() < target:
            time.sleep(0.05)
        if target == PASSAGES:
            time.sleep(rng.uniform(0.0, 1.5))
        workers = spawned_workers(proc.pid)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        assert wait_gone(workers, 30) == [], "workers outlived the killed ingest"
        seen.append(count_docs())
    final = ingest_process(root, env)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()[-2000:]
    return seen


def base_env(tmp_path: Path, backend: str, collection: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEORAG_BACKEND=backend,
        NEORAG_DATA_DIR=str(tmp_path / "data"),
        NEORAG_COLLECTION=collection,
        NEORAG_INGEST__BATCH_DOCUMENTS=str(BATCH),
        NEORAG_INGEST__WORKERS=str(WORKERS),
    )
    return env


def embedded_counter(tmp_path: Path):
    db = store_path(Settings(backend="embedded", data_dir=tmp_path / "data"))

    def count() -> int:
        if not db.exists():
            return 0
        with EmbeddedStore(db) as s:
            return documents_in(s)

    return db, count


def test_embedded_survives_kills(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    want = uninterrupted_snapshot(root, tmp_path, "default")
    env = base_env(tmp_path, "embedded", "default")
    db, count = embedded_counter(tmp_path)
    seen = kill_and_resume(root, env, count, seed=7)
    assert sum(0 < n < PASSAGES for n in seen) >= KILLS - 1, (
        f"kills did not land mid-ingest: {seen}"
    )
    with EmbeddedStore(db) as store:
        assert_same_graph(store.snapshot(), want)


@pytest.mark.neo4j
def test_neo4j_survives_kills(neo4j_store, tmp_path: Path) -> None:
    root = corpus(tmp_path)
    want = uninterrupted_snapshot(root, tmp_path, neo4j_store.collection)
    env = base_env(tmp_path, "neo4j", neo4j_store.collection)
    seen = kill_and_resume(root, env, lambda: documents_in(neo4j_store), seed=5)
    assert sum(0 < n < PASSAGES for n in seen) >= KILLS - 1, (
        f"kills did not land mid-ingest: {seen}"
    )
    assert_same_graph(neo4j_store.snapshot(), want)


def test_dead_worker_stops_the_ingest_and_a_rerun_finishes(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    env = base_env(tmp_path, "embedded", "default")
    db, count = embedded_counter(tmp_path)
    proc = ingest_process(root, env)
    wait_for(lambda: count() >= BATCH, proc, "the first batch was written")
    workers = spawned_workers(proc.pid)
    assert len(workers) == WORKERS
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    message = err.decode()
    assert proc.returncode == 2, message
    assert "error: an ingest worker process died (killed by SIGKILL" in message
    assert "Traceback" not in message and message.count("error:") == 1
    assert wait_gone(workers, 30) == []
    assert BATCH <= count() < PASSAGES

    final = ingest_process(root, env)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()[-2000:]
    with EmbeddedStore(db) as store:
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, "default"))


def test_ctrl_c_stops_the_workers(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole process group, workers included. The corpus
    is large enough that the ingest is still running when the signal comes (workers build
    batches ahead, so the writes after the first one can be quick)."""
    root = corpus(tmp_path, 6 * PASSAGES)
    env = base_env(tmp_path, "embedded", "default")
    _, count = embedded_counter(tmp_path)
    proc = ingest_process(root, env, new_session=True)
    wait_for(lambda: count() >= BATCH, proc, "the first batch was written")
    assert proc.poll() is None, "the ingest finished before Ctrl-C could be sent"
    workers = spawned_workers(proc.pid)
    assert len(workers) == WORKERS
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    message = err.decode()
    assert proc.returncode == 130, message
    assert "interrupted" in message and "Traceback" not in message
    assert wait_gone(workers, 30) == []
