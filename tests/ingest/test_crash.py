"""Crash safety with real process kills: SIGKILL the `neorag ingest` process at random
points, re-run it, and the graph equals an uninterrupted ingest (no weight counted twice)."""

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

pytestmark = pytest.mark.slow
PASSAGES = 240
BATCH = 8
KILLS = 4


def corpus(tmp_path: Path) -> Path:
    source = DATASETS / "2wiki-dev" / "corpus.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:PASSAGES]
    path = tmp_path / "corpus" / "corpus.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.parent


def ingest_process(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "ingest", str(root), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def documents_in(store) -> int:
    return store.status().documents


def kill_and_resume(root: Path, env: dict[str, str], count_docs, seed: int) -> list[int]:
    """Kill the ingest KILLS times at random points, then let it finish; returns how many
    documents were stored at each kill. Points are chosen by progress, not by the clock
    (a busy machine would otherwise kill every run before it wrote anything): a random
    document count mid-ingest, and once a random moment after the last document (during
    the chunk-edge, analytics and index stages)."""
    rng = random.Random(seed)
    targets = [*sorted(rng.sample(range(BATCH, PASSAGES - BATCH), KILLS - 1)), PASSAGES]
    seen = []
    for target in targets:
        proc = ingest_process(root, env)
        while proc.poll() is None and count_docs() < target:
            time.sleep(0.05)
        if target == PASSAGES:
            time.sleep(rng.uniform(0.0, 1.5))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
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
    )
    return env


def test_embedded_survives_kills(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    want = uninterrupted_snapshot(root, tmp_path, "default")
    env = base_env(tmp_path, "embedded", "default")
    db = store_path(Settings(backend="embedded", data_dir=tmp_path / "data"))

    def count() -> int:
        if not db.exists():
            return 0
        with EmbeddedStore(db) as s:
            return documents_in(s)

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
    seen = kill_and_resume(root, env, lambda: documents_in(neo4j_store), seed=11)
    assert sum(0 < n < PASSAGES for n in seen) >= KILLS - 1, (
        f"kills did not land mid-ingest: {seen}"
    )
    assert_same_graph(neo4j_store.snapshot(), want)
