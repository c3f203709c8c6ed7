"""Per-document indexing in worker processes, written by one writer.

Chunking, token and entity analysis and embedding are per-document work, so batches of
documents go to `workers` spawned processes (each loads the models once) and come back as
the records the store writes. This process stays the only writer and writes the batches in
their original order, each in one transaction, so the graph equals the in-process ingest's
and a kill still leaves every document either fully stored or absent.

Workers are spawned, not forked (torch's and OpenMP's thread pools do not survive a fork).
Each gets cores // workers torch and BLAS threads, so N workers do not oversubscribe the
cores, and at most IN_FLIGHT_PER_WORKER batches per worker are queued, which bounds the
memory held in results.

Failures: a batch whose build raises is built again a document at a time, and the
documents that still fail are reported as skipped (with the error, in one line) while the
rest of the batch is written: one bad file never stops an ingest, and a re-run tries it
again. A failure to load the models is not a document's fault and stops the ingest. A
worker that dies (killed, out of memory) stops the ingest with one `WorkerDied` error;
workers exit on their own when this process dies (a SIGKILL leaves no orphans holding
models); Ctrl-C, which the workers ignore, terminates them from here.
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from graph.errors import NeoragError
from graph.types import ChunkRecord, DocumentRecord
from ingest import threads as threads_budget
from ingest.config import IngestConfig
from ingest.loaders import LoadedDocument
from ingest.loaders.types import FAILED, one_line
from ingest.models import IngestModels
from ingest.report import CHUNKS_EMBEDDED, IngestReport, NoProgress, Progress, Skip, timed
from ingest.tokens import Analyzer

Batch = Sequence[tuple[str, LoadedDocument]]
Built = list[tuple[DocumentRecord, list[ChunkRecord]]]
BuildBatch = Callable[[Batch, IngestConfig, IngestModels, Analyzer, IngestReport, Progress], Built]

WORKER_STAGES = ("chunk", "analyze", "embed")
IN_FLIGHT_PER_WORKER = 2
TERMINATE_GRACE_SECONDS = 10.0
MAX_REASON_CHARS = 300
PARENT_POLL_SECONDS = 1.0
WATCH_SECONDS = 0.5


class WorkerDied(NeoragError):
    pass


def pool_size(workers: int, batches: int) -> int:
    """Processes worth starting: one per batch at most (a process costs a model load)."""
    return max(1, min(workers, batches))


def load_models(models: IngestModels) -> None:
    """Load the models now, so their loading time is reported apart from the stages."""
    _ = models.embedder, models.extractor


def vector_dimension(built: Built) -> int:
    """The length of the first chunk vector in `built`, 0 when it holds none."""
    for _, chunks in built:
        for chunk in chunks:
            if chunk.embedding is not None:
                return len(chunk.embedding)
    return 0


def build_isolating(
    build: BuildBatch,
    batch: Batch,
    cfg: IngestConfig,
    models: IngestModels,
    analyzer: Analyzer,
    report: IngestReport,
    progress: Progress | None = None,
) -> tuple[Built, list[Skip]]:
    """`build(batch)`; should it raise, each document alone, the failing ones skipped.
    `progress` sees the chunk count inside the batch; the stages advance per batch."""
    inside = _ChunksOnly(progress) if progress is not None else NoProgress()
    try:
        return build(batch, cfg, models, analyzer, report, inside), []
    except Exception as exc:
        if len(batch) == 1:
            return [], [_skip(batch[0][1], exc)]
    built: Built = []
    skips: list[Skip] = []
    for item in batch:
        try:
            built += build([item], cfg, models, analyzer, report, inside)
        except Exception as exc:
            skips.append(_skip(item[1], exc))
    return built, skips


class _ChunksOnly(NoProgress):
    """Forwards the chunk count a build reports; the batch's stages are advanced by the
    caller once the batch is built (and its failed documents known)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    def advance(self, stage: str, n: int = 1) -> None:
        if stage == CHUNKS_EMBEDDED:
            self._progress.advance(stage, n)


def _skip(doc: LoadedDocument, exc: Exception) -> Skip:
    where = doc.source if doc.key == doc.source else f"{doc.source} (record {doc.id})"
    reason = one_line(f"could not be indexed: {type(exc).__name__}: {exc}")
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    return Skip(where, reason, FAILED)


def build_batches(
    build: BuildBatch,
    batches: Sequence[Batch],
    cfg: IngestConfig,
    report: IngestReport,
    progress: Progress,
    *,
    models: IngestModels | None = None,
    analyzer: Analyzer | None = None,
    preload_models: bool = True,
) -> Iterator[Built]:
    """`build(batch, ...)` for every batch, yielded in batch order: in this process when
    one worker suffices (then with `models`, if given), else in `cfg.workers` processes.
    Documents whose build fails are left out and added to `report.skipped` (see
    `build_isolating`). Worker stage times are summed over the workers, so they can exceed
    the wall time. Close the iterator (`contextlib.closing`) to stop the workers when the
    caller fails."""
    workers = pool_size(cfg.workers, len(batches))
    report.workers = workers
    if workers == 1:
        models = models or IngestModels(cfg.models, cfg.device)
        analyzer = analyzer or Analyzer(cfg.tokens)
        if preload_models:
            with timed(report, "models", time.perf_counter):
                load_models(models)
        for batch in batches:
            built, skips = build_isolating(build, batch, cfg, models, analyzer, report, progress)
            _batch_done(len(batch), skips, report, progress)
            yield built
        return
    yield from _in_workers(build, batches, cfg, workers, report, progress, preload_models)


def _in_workers(
    build: BuildBatch,
    batches: Sequence[Batch],
    cfg: IngestConfig,
    workers: int,
    report: IngestReport,
    progress: Progress,
    preload_models: bool,
) -> Iterator[Built]:
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(build, cfg, threads_budget.share(workers), preload_models),
    )
    queued = iter(batches)
    pending: deque[tuple[int, Future[tuple[Built, list[Skip], dict[str, float]]]]] = deque()
    written = 0

    def submit(batch: Batch | None) -> None:
        if batch is not None:
            pending.append((len(batch), pool.submit(_build, batch)))

    try:
        for batch in itertools.islice(queued, IN_FLIGHT_PER_WORKER * workers):
            submit(batch)
        while pending:
            size, future = pending.popleft()
            built, skips, seconds = _result(future, pool)
            for stage, spent in seconds.items():
                report.add_time(stage, spent)
            _batch_done(size, skips, report, progress)
            progress.advance(CHUNKS_EMBEDDED, sum(len(chunks) for _, chunks in built))
            submit(next(queued, None))
            yield built
            written += size
    except BrokenProcessPool:
        how = how_workers_died(_terminate(pool))
        _unblock_results(pool)
        raise WorkerDied(
            f"an ingest worker process died ({how}); the {written} documents written "
            "before it are stored: run the ingest again to index the rest"
        ) from None
    except BaseException:
        _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _result(
    future: Future[tuple[Built, list[Skip], dict[str, float]]], pool: ProcessPoolExecutor
) -> tuple[Built, list[Skip], dict[str, float]]:
    """The future's result, watching the workers meanwhile: a worker killed while it sends
    a result leaves half a message in the result pipe, and the pool's own manager thread
    then waits for the rest forever instead of marking the pool broken."""
    while True:
        try:
            return future.result(timeout=WATCH_SECONDS)
        except FutureTimeout:
            if any(p.exitcode not in (None, 0) for p in _processes(pool)):
                raise BrokenProcessPool("an ingest worker process died") from None


def _processes(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    return list((getattr(pool, "_processes", None) or {}).values())


def _unblock_results(pool: ProcessPoolExecutor) -> None:
    """Close this process's end of the result pipe once the workers are gone, so a manager
    thread stuck reading half a result gets end-of-file, marks the pool broken and exits
    (its shutdown, and the interpreter's exit, join that thread)."""
    queue = getattr(pool, "_result_queue", None)
    writer = getattr(queue, "_writer", None)
    if writer is not None:
        writer.close()


def _batch_done(size: int, skips: list[Skip], report: IngestReport, progress: Progress) -> None:
    report.skipped += skips
    for stage in WORKER_STAGES:
        progress.advance(stage, size)


def how_workers_died(exit_codes: list[int | None]) -> str:
    """What the exit codes of a broken pool's workers say, for the one-line error: the
    pool terminates the survivors (SIGTERM), so any other code is the death's cause."""
    if not any(code is not None for code in exit_codes):
        return "its exit status could not be read"
    causes = sorted({code for code in exit_codes if code not in (None, -signal.SIGTERM)})
    if not causes:
        return "terminated by another process"
    said = []
    for code in causes:
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
            oom = ", the out-of-memory killer's signal" if code == -signal.SIGKILL else ""
            said.append(f"killed by {name}{oom}")
        else:
            said.append(f"exit code {code}")
    return "; ".join(said)


def _terminate(pool: ProcessPoolExecutor) -> list[int | None]:
    """Stop the workers now, mid-batch (a batch can take a minute): nothing they hold is
    written. ProcessPoolExecutor has no public way to do this before Python 3.14. Returns
    the workers' exit codes."""
    processes = _processes(pool)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(TERMINATE_GRACE_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
    return [process.exitcode for process in processes]


@dataclass(slots=True)
class _Worker:
    build: BuildBatch
    cfg: IngestConfig
    models: IngestModels
    analyzer: Analyzer
    threads: int
    preload_models: bool
    loaded: bool = False


_worker: _Worker | None = None


def _start_worker(build: BuildBatch, cfg: IngestConfig, threads: int, preload: bool) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()
    threads_budget.limit(threads)
    _thread_lock_for_tqdm()
    models = IngestModels(cfg.models, cfg.device)
    _worker = _Worker(build, cfg, models, Analyzer(cfg.tokens), threads, preload)


def _thread_lock_for_tqdm() -> None:
    """tqdm (used while models load and encode) otherwise creates a multiprocessing lock:
    in a spawned worker that is a named semaphore, and a worker stopped mid-batch cannot
    release it, so the resource tracker prints a leak warning after the writer's error.
    Workers draw no bars of their own, so a thread lock is all tqdm needs here."""
    try:
        from tqdm import tqdm
    except ImportError:
        return
    tqdm.set_lock(threading.RLock())


def _exit_with_parent() -> None:
    """A worker whose writer died has nobody to give results to: exit at once. The
    sentinel is a pipe the parent holds open; it also reads as closed should the parent
    close that descriptor while alive (a double close elsewhere), so the worker then
    checks that it was reparented before exiting, and otherwise watches its parent id."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    multiprocessing.connection.wait([parent.sentinel])
    while os.getppid() == parent.pid:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _build(batch: Batch) -> tuple[Built, list[Skip], dict[str, float]]:
    worker = _worker
    if worker is None:
        raise RuntimeError("ingest worker used before it was started")
    report = IngestReport(path="", backend="")
    if worker.preload_models and not worker.loaded:
        with timed(report, "models", time.perf_counter):
            load_models(worker.models)
        threads_budget.limit(worker.threads)
        worker.loaded = True
    built, skips = build_isolating(
        worker.build, batch, worker.cfg, worker.models, worker.analyzer, report
    )
    return built, skips, report.seconds
