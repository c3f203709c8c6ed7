"""Crash safety with real process kills: `neorag ingest` is SIGKILLed at every stage boundary
of its pipeline (tests/ingest/killpoints.py names them), once each, and re-run; after the
last run the graph equals an uninterrupted ingest, with no weight counted twice. Then the
corpus is edited (passages changed, removed, added) and the re-ingest is killed at the
boundaries of the incremental stages the same way: the stored chunk edges then equal a
fresh build of the stored corpus exactly.

The first run of each chain has two worker processes (ingest.parallel): a killed writer
leaves no worker behind. A killed worker stops the ingest with one error line, and Ctrl-C
stops them all."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.services import store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.edges.journal import EdgeJournal
from tests.conftest import DATASETS
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot
from tests.ingest.processes import spawned_workers, wait_gone
from tests.ingest.test_incremental_edges import assert_edges_equal_fresh_build

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
PASSAGES = 24
BATCH = 8  # three batches: a kill between two of them leaves whole batches stored
WORKERS = 2

# (kill point, documents stored once the killed run is gone); a point's run starts from
# what the runs before it left. Every boundary of ingest/runner.py's pipeline is a point:
# inside a write transaction | between batches | written, before the edges | edges |
# analytics | indexes.
FRESH = [
    ("inside-a-write@2", 8),  # the second batch's transaction never commits
    ("batch-written", 16),
    ("scan-saved", 24),
    ("edges-written", 24),
    ("analytics-written", 24),
    ("indexes-written", 24),
]
# After the edit: one passage removed, six changed, one added (one batch).
CHANGE = [("removal-written", 23), ("batch-written", 24), ("edges-written", 24)]
# Neo4j's writes go through other code than the embedded store's; its chain covers the
# write transaction and each stage that writes to the server (edges, GDS analytics).
FRESH_NEO4J = [("inside-a-write@2", 8), ("edges-written", 24), ("analytics-written", 24)]
CHANGE_NEO4J = [("removal-written", 23), ("edges-written", 24)]


def corpus(tmp_path: Path, passages: int = PASSAGES) -> Path:
    source = DATASETS / "2wiki-dev" / "corpus.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:passages]
    path = tmp_path / "corpus" / "corpus.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.parent


def edit(root: Path) -> None:
    rng = random.Random(5)
    path = root / "corpus.jsonl"
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    del items[rng.randrange(len(items))]
    for i in rng.sample(range(len(items)), 6):
        items[i]["text"] += " It was rebuilt in 1901."
    items.append({"id": "p-added", "title": "Rebuilt", "text": items[0]["text"] + " Again."})
    path.write_text("".join(json.dumps(p) + "\n" for p in items), encoding="utf-8")


def ingest_process(
    root: Path, env: dict[str, str], *, new_session: bool = False, kill_at: str | None = None
) -> subprocess.Popen[bytes]:
    command = ["-m", "tests.ingest.killpoints", kill_at] if kill_at else ["-m", "app.cli"]
    return subprocess.Popen(
        [sys.executable, *command, "ingest", str(root), "--json"],
        cwd=REPO,
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


def killed_at(point: str, root: Path, env: dict[str, str]) -> None:
    """One ingest, SIGKILLed at `point`; no worker process outlives it."""
    proc = ingest_process(root, env, kill_at=point)
    workers: set[int] = set()
    while proc.poll() is None:
        workers.update(spawned_workers(proc.pid))
        time.sleep(0.05)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, f"{point} was never reached: {err[-2000:]}"
    assert wait_gone(sorted(workers), 30) == [], f"workers outlived the ingest killed at {point}"


def finish(root: Path, env: dict[str, str]) -> None:
    final = ingest_process(root, env)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()[-2000:]


def base_env(tmp_path: Path, backend: str, collection: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEORAG_BACKEND=backend,
        NEORAG_DATA_DIR=str(tmp_path / "data"),
        NEORAG_COLLECTION=collection,
        NEORAG_INGEST__BATCH_DOCUMENTS=str(BATCH),
        NEORAG_INGEST__WORKERS="1",
    )
    return env


def embedded_counter(tmp_path: Path) -> tuple[Path, Callable[[], int]]:
    db = store_path(Settings(backend="embedded", data_dir=tmp_path / "data"))

    def count() -> int:
        if not db.exists():
            return 0
        with EmbeddedStore(db) as s:
            return s.status().documents

    return db, count


def kill_at_every_boundary(
    tmp_path: Path,
    env: dict[str, str],
    open_store: Callable[[], object],
    fresh: list[tuple[str, int]],
    change: list[tuple[str, int]],
) -> None:
    root = corpus(tmp_path)
    collection = env["NEORAG_COLLECTION"]
    for n, (point, documents) in enumerate(fresh):
        run_env = {**env, "NEORAG_INGEST__WORKERS": str(WORKERS)} if n == 0 else env
        killed_at(point, root, run_env)
        with open_store() as store:
            assert store.status().documents == documents, point
    finish(root, env)
    with open_store() as store:
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, collection))

    edit(root)
    for point, documents in change:
        killed_at(point, root, env)
        with open_store() as store:
            assert store.status().documents == documents, point
            if point in ("removal-written", "batch-written"):  # edges not refreshed yet
                assert not EdgeJournal.load(store).empty, point
    finish(root, env)
    (tmp_path / "changed").mkdir()
    want = uninterrupted_snapshot(root, tmp_path / "changed", collection)
    with open_store() as store:
        assert EdgeJournal.load(store).empty
        assert_edges_equal_fresh_build(store)
        assert_same_graph(store.snapshot(), want)


def test_embedded_recovers_from_a_kill_at_every_stage_boundary(tmp_path: Path) -> None:
    env = base_env(tmp_path, "embedded", "default")
    db, _ = embedded_counter(tmp_path)
    kill_at_every_boundary(tmp_path, env, lambda: EmbeddedStore(db), FRESH, CHANGE)


@pytest.mark.neo4j
def test_neo4j_recovers_from_a_kill_at_every_stage_boundary(neo4j_store, tmp_path: Path) -> None:
    from graph.neo4j.store import Neo4jStore
    from tests.conftest import neo4j_config_from_env

    env = base_env(tmp_path, "neo4j", neo4j_store.collection)
    config = neo4j_config_from_env()
    kill_at_every_boundary(
        tmp_path,
        env,
        lambda: Neo4jStore(config, neo4j_store.collection),
        FRESH_NEO4J,
        CHANGE_NEO4J,
    )


def test_dead_worker_stops_the_ingest_and_a_rerun_finishes(tmp_path: Path) -> None:
    """Batches of two: when the first is written, most are not even handed to a worker
    yet, so the kill always leaves work the dead pool cannot finish."""
    root = corpus(tmp_path)
    small = 2
    env = {
        **base_env(tmp_path, "embedded", "default"),
        "NEORAG_INGEST__WORKERS": str(WORKERS),
        "NEORAG_INGEST__BATCH_DOCUMENTS": str(small),
    }
    db, count = embedded_counter(tmp_path)
    proc = ingest_process(root, env)
    wait_for(lambda: count() >= small, proc, "the first batch was written")
    workers = spawned_workers(proc.pid)
    assert len(workers) == WORKERS
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    message = err.decode()
    assert proc.returncode == 2, message
    assert "error: an ingest worker process died (killed by SIGKILL" in message
    assert "Traceback" not in message and message.count("error:") == 1
    assert wait_gone(workers, 30) == []
    assert small <= count() < PASSAGES

    finish(root, env)
    with EmbeddedStore(db) as store:
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, "default"))


def test_ctrl_c_stops_the_workers(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole process group, workers included. The corpus
    is large enough that the ingest is still running when the signal comes (workers build
    batches ahead, so the writes after the first one can be quick)."""
    root = corpus(tmp_path, 60 * BATCH)
    env = {**base_env(tmp_path, "embedded", "default"), "NEORAG_INGEST__WORKERS": str(WORKERS)}
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
