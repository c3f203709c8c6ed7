"""Parallel ingest: worker processes build the same graph as the in-process path, results
are written in batch order, a document whose build fails is reported and skipped while the
rest ingests, a dying worker stops the ingest with one clear error and leaves no process
behind, and the embedding device resolves as documented."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

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
    PARENT_POLL_SECONDS,
    Batch,
    Built,
    WorkerDied,
    _exit_with_parent,
    build_batches,
    how_workers_died,
    pool_size,
)
from ingest.report import CHUNKS_EMBEDDED, IngestReport
from ingest.runner import build_chunks, run_ingest
from ingest.threads import share
from tests.ingest.corpora import write_corpus
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot

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


def dies_on_d2(batch: Batch, *_: object) -> Built:
    if batch[0][0] == "d2":
        os._exit(9)
    return records(batch)


def watches_parent(started: Any) -> None:
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    started.set()
    time.sleep(120)


def reports_threads(batch: Batch, *_: object) -> Built:
    import torch
    from threadpoolctl import threadpool_info

    counts = {"torch": torch.get_num_threads()}
    counts.update({pool["internal_api"]: pool["num_threads"] for pool in threadpool_info()})
    return records(batch, title=json.dumps(counts))


def tqdm_lock_kind(batch: Batch, *_: object) -> Built:
    from tqdm import tqdm
    from tqdm.std import TqdmDefaultWriteLock

    for _ in tqdm(range(3), disable=False):
        pass
    kind = f"{type(tqdm.get_lock()).__module__}:{getattr(TqdmDefaultWriteLock, 'mp_lock', None)}"
    return records(batch, title=kind)


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
    assert share(2, cores=2) == 1
    assert share(2, cores=8) == 4
    assert share(3, cores=2) == 1


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
    # the stages per document, and the chunks the workers embedded (these records have none)
    assert progress.advanced == {"chunk": 5, "analyze": 5, "embed": 5, CHUNKS_EMBEDDED: 0}
    assert not multiprocessing.active_children()


@spawns
def test_workers_hold_no_named_semaphores() -> None:
    """A worker stopped mid-batch cannot unlink a named semaphore, and the resource tracker
    then prints a leak warning under the writer's one-line error."""
    got, _ = run(tqdm_lock_kind, documents(2))
    kinds = {rec.title for built in got for rec, _ in built}
    assert kinds == {"_thread:None"}, kinds


def fails_on_d2_and_d4(batch: Batch, *_: object) -> Built:
    if any(doc_id in ("d2", "d4") for doc_id, _ in batch):
        raise ValueError("cannot chunk\nthis one")
    return records(batch)


def merged(batches: list[Batch]) -> list[Batch]:
    """The one-document batches two at a time."""
    return [[*batches[i], *batches[i + 1]] for i in range(0, len(batches) - 1, 2)]


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=spawns)])
def test_a_failing_document_is_skipped_and_reported(workers: int) -> None:
    """d2 shares a batch with d3, d4 with d5: the batch is built again a document at a
    time, so d3 and d5 are still built; d2 and d4 are reported with their error."""
    got, report = run(fails_on_d2_and_d4, merged(documents(8)), workers=workers)
    assert [[rec.id for rec, _ in built] for built in got] == [
        ["d0", "d1"],
        ["d3"],
        ["d5"],
        ["d6", "d7"],
    ]
    assert [(s.source, s.reason) for s in report.skipped] == [
        (f"/src/{d}", "could not be indexed: ValueError: cannot chunk this one")
        for d in ("d2", "d4")
    ]
    assert not multiprocessing.active_children()


def fails_to_start(batch: Batch, *_: object) -> Built:
    raise AssertionError("never called: the models fail to load first")


@spawns
def test_models_that_cannot_load_stop_the_ingest() -> None:
    """Not a document's fault: the error is raised, not reported per document."""
    if cuda_available():
        pytest.skip("torch sees a CUDA device here: the error case cannot happen")
    cfg = IngestConfig(workers=2, device="cuda")
    report = IngestReport(path="", backend="")
    with pytest.raises(NeoragError, match="no CUDA device"):
        list(build_batches(fails_to_start, documents(4), cfg, report, RecordingProgress()))
    assert report.skipped == []
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
    assert "worker process died (exit code 9)" in str(err.value)
    assert not multiprocessing.active_children()


@spawns
def test_workers_split_the_cores() -> None:
    """Two workers on this machine: each gets cores // 2 torch and BLAS threads."""
    got, _ = run(reports_threads, documents(4))
    want = share(2)
    for built in got:
        counts = json.loads(built[0][0].title)
        assert counts["torch"] == want
        assert all(n == want for name, n in counts.items() if name in ("openblas", "openmp"))


def test_the_error_says_how_a_worker_died() -> None:
    """The pool terminates the survivors (-SIGTERM), so the other codes are the cause."""
    assert how_workers_died([-15, -9]) == "killed by SIGKILL, the out-of-memory killer's signal"
    assert how_workers_died([1, -15, None]) == "exit code 1"
    assert how_workers_died([-11, 3]) == "killed by SIGSEGV; exit code 3"
    assert how_workers_died([-15, -15]) == "terminated by another process"
    assert how_workers_died([]) == "its exit status could not be read"


@spawns
def test_a_worker_outlives_a_closed_sentinel_while_its_parent_lives() -> None:
    """The parent-death sentinel is the write end of a pipe this process holds; closed here
    while this process lives (as a double close elsewhere would), the worker stays."""
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    worker = ctx.Process(target=watches_parent, args=(started,))
    worker.start()
    try:
        assert started.wait(120)
        popen = worker._popen  # type: ignore[attr-defined]
        read_end, write_end = popen.finalizer._args  # close_fds(parent_r, parent_w)
        os.close(write_end)
        popen.finalizer._args = (read_end,)  # closed here; not again at exit
        time.sleep(3 * PARENT_POLL_SECONDS)
        assert worker.is_alive()
    finally:
        worker.terminate()
        worker.join(30)


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
    assert Settings().ingest.workers == 1  # measured: 2 workers no faster on 2 cores
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
def test_cpu_device_embeds_through_the_onnx_export() -> None:
    from ingest.query_model import OnnxEmbedder

    embedder = IngestModels(SETTINGS.ingest.models, "cpu").embedder
    assert embedder.device == "cpu"
    assert isinstance(embedder, OnnxEmbedder)


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


POISONED = "Phoolwari"


def poisoned_build_chunks(batch: Batch, *args: object) -> Built:
    """The real build, failing for the batch that holds the passage titled POISONED."""
    if any(doc.title == POISONED for _, doc in batch):
        raise ValueError("poisoned passage")
    return build_chunks(batch, *args)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_document_is_skipped_while_the_rest_ingests(
    workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One passage whose build fails is reported and left out, the others are stored; the
    next ingest (the fault gone) indexes exactly that passage, and the graph equals an
    uninterrupted ingest's."""
    root = write_corpus(tmp_path / "docs", "A")
    cfg = SETTINGS.ingest.model_copy(update={"workers": workers, "batch_documents": 2})
    with EmbeddedStore(tmp_path / "g.sqlite") as store:
        monkeypatch.setattr("ingest.runner.build_chunks", poisoned_build_chunks)
        first = run_ingest(root, store, cfg, SETTINGS.algorithms, tmp_path / "idx")
        monkeypatch.undo()
        assert first.workers == workers
        assert [(s.source, s.reason) for s in first.skipped] == [
            (
                str(root / "wiki" / "corpus.jsonl") + " (record p19)",
                "could not be indexed: ValueError: poisoned passage",
            )
        ]
        titles = {d.title for d in store.documents().values()}
        assert POISONED not in titles and len(titles) == len(first.new) >= 8
        assert first.derived_rebuilt

        second = run_ingest(root, store, cfg, SETTINGS.algorithms, tmp_path / "idx")
        assert second.ok and len(second.new) == 1 and second.changed == []
        assert store.documents()[second.new[0]].title == POISONED
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, "default"))


@pytest.mark.slow
def test_a_failed_document_during_a_change_of_model_is_re_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stored version holds the replaced model's vectors: it is re-embedded from its
    stored text like a document from another path, so the collection stays in one model's
    space, and the next ingest re-indexes it."""
    from ingest.model_stamp import read_stamp
    from tests.ingest.tiny_models import save_projected

    root = write_corpus(tmp_path / "docs", "A")
    before = SETTINGS.ingest.model_copy(update={"workers": 1})
    model = str(save_projected(tmp_path / "minilm-dense96"))
    after = before.model_copy(
        update={"models": before.models.model_copy(update={"embedding_model": model})}
    )
    with EmbeddedStore(tmp_path / "g.sqlite") as store:
        run_ingest(root, store, before, SETTINGS.algorithms, tmp_path / "idx")
        poisoned = next(i for i, d in store.documents().items() if d.title == POISONED)
        monkeypatch.setattr("ingest.runner.build_chunks", poisoned_build_chunks)
        changed = run_ingest(root, store, after, SETTINGS.algorithms, tmp_path / "idx")
        monkeypatch.undo()
        assert len(changed.skipped) == 1 and poisoned not in changed.changed
        assert changed.reembedded == [poisoned]
        assert {v.shape for v in store.chunk_vectors("embedding").values()} == {(96,)}
        stamp = read_stamp(store)
        assert stamp is not None and (stamp.name, stamp.dimension) == (model, 96)

        again = run_ingest(root, store, after, SETTINGS.algorithms, tmp_path / "idx")
        assert again.ok and again.changed == [poisoned] and again.reembedded == []
