"""Parallel ingest: worker processes build the same graph as the in-process path, results
are written in batch order, a failing or dying worker stops the ingest with one clear error
and leaves no process behind, and the embedding device resolves as documented."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.errors import NeoragError
from graph.types import DocumentRecord
from ingest.config import IngestConfig
from ingest.embed import cuda_available, resolve_device
from ingest.loaders import LoadedDocument, Section
from ingest.models import IngestModels
from ingest.parallel import (
    Batch,
    Built,
    WorkerDied,
    build_batches,
    pool_size,
    threads_per_worker,
)
from ingest.report import IngestReport
from ingest.runner import run_ingest
from tests.ingest.corpora import write_corpus
from tests.ingest.graph_compare import assert_same_graph

SETTINGS = Settings()
# Spawned workers import torch and spaCy: tens of seconds each on a busy two-core machine.
spawns = pytest.mark.slow


class RecordingProgress:
    def __init__(self) -> None:
        self.advanced: dict[str, int] = {}

    def start(self, stage: str, total: int | None) -> None:
        pass

    def advance(self, stage: str, n: int = 1) -> None:
        self.advanced[stage] = self.advanced.get(stage, 0) + n

    def finish(self, stage: str) -> None:
        pass


def documents(n: int) -> list[Batch]:
    """n one-document batches d0 … d(n-1)."""
    return [
        [(f"d{i}", LoadedDocument(f"d{i}", f"/src/d{i}", f"Doc {i}", [Section((), f"text {i}")]))]
        for i in range(n)
    ]


def records(batch: Batch, title: str | None = None) -> Built:
    return [
        (DocumentRecord(doc_id, doc.source, title or doc.title, doc.content_hash, 0.0), [])
        for doc_id, doc in batch
    ]


# Build functions run in the spawned workers, so they live at module level (pickled by name).
def first_batch_slowest(batch: Batch, *_: object) -> Built:
    time.sleep(1.5 if batch[0][0] == "d0" else 0.0)
    return records(batch)


def fails_on_d2(batch: Batch, *_: object) -> Built:
    if batch[0][0] == "d2":
        raise NeoragError("cannot chunk d2")
    return records(batch)


def dies_on_d2(batch: Batch, *_: object) -> Built:
    if batch[0][0] == "d2":
        os._exit(9)
    return records(batch)


def reports_threads(batch: Batch, *_: object) -> Built:
    import torch
    from threadpoolctl import threadpool_info

    counts = {"torch": torch.get_num_threads()}
    counts.update({pool["internal_api"]: pool["num_threads"] for pool in threadpool_info()})
    return records(batch, title=json.dumps(counts))


def run(build, batches: list[Batch], workers: int = 2) -> tuple[list[Built], IngestReport]:
    report = IngestReport(path="", backend="")
    cfg = IngestConfig(workers=workers)
    out = list(
        build_batches(build, batches, cfg, report, RecordingProgress(), preload_models=False)
    )
    return out, report


def test_pool_size_and_threads() -> None:
    assert pool_size(4, 1) == 1
    assert pool_size(2, 30) == 2
    assert pool_size(8, 3) == 3
    assert threads_per_worker(2, cores=2) == 1
    assert threads_per_worker(2, cores=8) == 4
    assert threads_per_worker(3, cores=2) == 1


@spawns
def test_results_come_back_in_batch_order() -> None:
    """d0 takes longest, so d1 … are done first; the writer still gets d0 first."""
    batches = documents(5)
    report = IngestReport(path="", backend="")
    progress = RecordingProgress()
    cfg = IngestConfig(workers=2)
    got = list(
        build_batches(first_batch_slowest, batches, cfg, report, progress, preload_models=False)
    )
    assert [rec.id for built in got for rec, _ in built] == ["d0", "d1", "d2", "d3", "d4"]
    assert report.workers == 2
    assert progress.advanced == {"chunk": 5, "analyze": 5, "embed": 5}
    assert not multiprocessing.active_children()


@spawns
def test_worker_exception_is_reraised_as_itself() -> None:
    with pytest.raises(NeoragError, match="cannot chunk d2"):
        run(fails_on_d2, documents(6))
    assert not multiprocessing.active_children()


@spawns
def test_dead_worker_is_one_clear_error() -> None:
    batches = documents(6)
    cfg = IngestConfig(workers=2)
    built = build_batches(
        dies_on_d2,
        batches,
        cfg,
        IngestReport(path="", backend=""),
        RecordingProgress(),
        preload_models=False,
    )
    written: list[str] = []
    started = time.monotonic()
    with pytest.raises(WorkerDied, match="worker process died") as err:
        for result in built:
            written += [rec.id for rec, _ in result]
    assert time.monotonic() - started < 120, "a dead worker must not hang the ingest"
    assert written == ["d0", "d1"][: len(written)], "what came back is a prefix, in order"
    assert f"the {len(written)} documents written before it are stored" in str(err.value)
    assert not multiprocessing.active_children()


@spawns
def test_workers_split_the_cores() -> None:
    """Two workers on this machine: each gets cores // 2 torch and BLAS threads."""
    got, _ = run(reports_threads, documents(4))
    want = threads_per_worker(2)
    for built in got:
        counts = json.loads(built[0][0].title)
        assert counts["torch"] == want
        assert all(n == want for name, n in counts.items() if name in ("openblas", "openmp"))


def test_one_batch_stays_in_process() -> None:
    got, report = run(first_batch_slowest, documents(1), workers=4)
    assert report.workers == 1 and len(got) == 1


def test_device_resolution() -> None:
    assert resolve_device("auto", lambda: True) == "cuda"
    assert resolve_device("auto", lambda: False) == "cpu"
    assert resolve_device("cpu", lambda: True) == "cpu"
    assert resolve_device("cuda", lambda: True) == "cuda"
    with pytest.raises(NeoragError, match="torch sees no CUDA device"):
        resolve_device("cuda", lambda: False)
    with pytest.raises(NeoragError, match="unknown embedding device"):
        resolve_device("tpu", lambda: True)
    assert resolve_device("auto") == ("cuda" if cuda_available() else "cpu")


def test_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().ingest.workers == os.cpu_count()
    assert Settings().ingest.device == "auto"
    monkeypatch.setenv("NEORAG_INGEST__WORKERS", "3")
    monkeypatch.setenv("NEORAG_INGEST__DEVICE", "cpu")
    assert (Settings().ingest.workers, Settings().ingest.device) == (3, "cpu")
    monkeypatch.setenv("NEORAG_INGEST__DEVICE", "gpu")
    with pytest.raises(ValidationError):
        Settings()
    monkeypatch.setenv("NEORAG_INGEST__DEVICE", "cpu")
    monkeypatch.setenv("NEORAG_INGEST__WORKERS", "0")
    with pytest.raises(ValidationError):
        Settings()


def test_cuda_without_a_device_stops_the_ingest(tmp_path: Path) -> None:
    if cuda_available():
        pytest.skip("torch sees a CUDA device here: the error case cannot happen")
    root = write_corpus(tmp_path / "docs", "A")
    cfg = SETTINGS.ingest.model_copy(update={"device": "cuda", "workers": 1})
    with (
        EmbeddedStore(tmp_path / "g.sqlite") as store,
        pytest.raises(NeoragError, match="no CUDA device"),
    ):
        run_ingest(root, store, cfg, SETTINGS.algorithms, tmp_path / "idx")


@pytest.mark.slow
def test_cpu_device_places_the_model_on_the_cpu() -> None:
    embedder = IngestModels(SETTINGS.ingest.models, "cpu").embedder
    assert embedder.device == "cpu"
    assert embedder._model.device.type == "cpu"


@pytest.mark.slow
def test_two_workers_build_the_same_graph(store, tmp_path: Path) -> None:
    """A, then the edited A′, with 2 workers equals the in-process ingest (both backends)."""
    root = tmp_path / "docs"
    one = SETTINGS.ingest.model_copy(update={"workers": 1, "batch_documents": 2})
    two = SETTINGS.ingest.model_copy(update={"workers": 2, "batch_documents": 2})
    models = IngestModels(SETTINGS.ingest.models)
    with EmbeddedStore(tmp_path / "reference.sqlite", store.collection) as reference:
        for version in ("A", "A2"):
            write_corpus(root, version)
            want = run_ingest(
                root, reference, one, SETTINGS.algorithms, tmp_path / "ref", models=models
            )
            got = run_ingest(root, store, two, SETTINGS.algorithms, tmp_path / "idx")
            assert (want.workers, got.workers) == (1, 2)
            assert (got.new, got.changed, got.removed) == (want.new, want.changed, want.removed)
            assert got.chunks_written == want.chunks_written
            assert got.seconds["models"] > 0
            assert_same_graph(store.snapshot(), reference.snapshot())
