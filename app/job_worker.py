"""A warm process for a server's ingest jobs: one job at a time, its models kept loaded
between jobs.

A job in a process of its own (app/jobs.py) is isolated from the query processes, but a
new process pays its start before the change: imports, the embedding model, spaCy — about
two seconds of a one-document change that takes one second of work. This worker is such a
process that stays: the server hands it the job file and it runs the job exactly as a new
process would (`jobs.run_job`, the same file, the same outcome), then waits for the next,
with what it loaded still in memory. A job that arrives while it is busy, or after it died,
gets a process of its own as before; after `idle` seconds without a job it exits, handing
its memory back.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import threading
from multiprocessing.connection import Connection
from pathlib import Path

log = logging.getLogger("neorag.api")


def _serve(conn: Connection, idle: float) -> None:
    """The worker process: run each job path it is sent, answer when done."""
    from app.jobs import run_job

    while conn.poll(idle):
        try:
            path = conn.recv()
        except EOFError:
            return
        if path is None:
            return
        try:
            code = run_job(Path(path))
        except BaseException as exc:  # run_job records its own errors; this is the rest
            log.warning("warm job worker: job %s ended with %s", path, exc)
            code = 1
        conn.send(code)


class WarmJobWorker:
    def __init__(self, idle: float) -> None:
        self.idle = idle
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._busy = False

    def submit(self, path: Path) -> int | None:
        """Hand the job file to the worker (started if needed); its pid, or None when it
        is busy (the caller starts a process of its own)."""
        with self._lock:
            if self._busy:
                return None
            if self._process is None or not self._process.is_alive():
                self._start()
            assert self._conn is not None and self._process is not None
            try:
                self._conn.send(str(path))
            except (OSError, EOFError):  # exited on its idle timeout a moment ago
                self._start()
                self._conn.send(str(path))
            self._busy = True
            conn, process = self._conn, self._process
        threading.Thread(target=self._wait, args=(conn, process), daemon=True).start()
        return process.pid

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_serve, args=(theirs, self.idle), name="neorag-ingest-worker", daemon=False
        )
        process.start()
        theirs.close()
        self._process, self._conn = process, ours

    def _wait(self, conn: Connection, process: multiprocessing.process.BaseProcess) -> None:
        try:
            conn.recv()
        except (EOFError, OSError):
            # The worker died (killed, out of memory): reap it, so its pid is gone and the
            # job file reads as failed (jobs.read_job); the next job starts a new worker.
            process.join(10)
        with self._lock:
            self._busy = False

    def close(self) -> None:
        with self._lock:
            process, conn = self._process, self._conn
            self._process = self._conn = None
        if conn is not None:
            with contextlib.suppress(OSError, EOFError):
                conn.send(None)
        if process is not None:
            process.join(30)
            if process.is_alive():
                process.terminate()
