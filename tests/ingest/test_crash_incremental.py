"""Crash safety of the incremental derived stages with real process kills: after an indexed
corpus is edited (passages changed, removed, added), `neorag ingest` is SIGKILLed at random
moments of the re-ingest (writes with their journal entries, the edge update, analytics),
re-run to completion, and the stored chunk edges then equal a fresh build of the stored
corpus exactly, with the rest of the graph equal to an uninterrupted ingest."""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from app.services import store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.edges.journal import EdgeJournal
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot
from tests.ingest.test_crash import base_env, corpus, ingest_process
from tests.ingest.test_incremental_edges import assert_edges_equal_fresh_build

pytestmark = pytest.mark.slow
KILLS = 4


def edit(root: Path, rng: random.Random) -> None:
    path = root / "corpus.jsonl"
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for i in rng.sample(range(len(items)), 6):
        items[i]["text"] += " It was rebuilt in 1901."
    del items[rng.randrange(len(items))]
    items.append({"id": "p-added", "title": "Rebuilt", "text": items[0]["text"] + " Again."})
    path.write_text("".join(json.dumps(p) + "\n" for p in items), encoding="utf-8")


def version(db: Path) -> int:
    with EmbeddedStore(db) as store:
        return store.graph_version()


def run(root: Path, env: dict[str, str]) -> None:
    proc = ingest_process(root, env)
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err.decode()[-2000:]


def test_killed_incremental_reingest_recovers_exactly(tmp_path: Path) -> None:
    rng = random.Random(5)
    root = corpus(tmp_path)
    env = base_env(tmp_path, "embedded", "default")
    db = store_path(Settings(backend="embedded", data_dir=tmp_path / "data"))
    run(root, env)
    edit(root, rng)
    journaled = []
    for _ in range(KILLS):
        # Killed by progress, not by the clock (a busy machine loads models slowly): soon
        # after the run's first write (a document batch, or the edge change itself).
        with EmbeddedStore(db) as store:
            before = store.graph_version()
        proc = ingest_process(root, env)
        while proc.poll() is None and version(db) == before:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        with EmbeddedStore(db) as store:
            journaled.append(not EdgeJournal.load(store).empty)
    run(root, env)
    # At least one kill left written documents whose edges were not refreshed yet.
    assert any(journaled), journaled
    want = uninterrupted_snapshot(root, tmp_path, "default")
    with EmbeddedStore(db) as store:
        assert EdgeJournal.load(store).empty
        assert_edges_equal_fresh_build(store)
        assert_same_graph(store.snapshot(), want)
