"""Background ingest and delete jobs whose state lives in files, so every process of a
server (several HTTP workers) reads the same jobs.

A job is a JSON file `<data_dir>/jobs/<id>.json`, replaced atomically on each update. It
runs outside the query processes, so they keep their cores and keep answering from the
published index until the job publishes the next one: in the server's warm job worker when
that is free (app/job_worker.py: its models stay loaded between jobs, so a small change
does not pay a process start), else in a process of its own (`python -m app.jobs <file>`),
which outlives the server that started it. The child reads its settings from the same
environment as the server plus the job's backend, data dir and collection (no credential
is ever written to a job file).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout

from app.ingest_service import OutsideRoots, delete_documents, ingest_lock, ingest_once
from app.settings import Settings, load_settings
from graph.errors import LockedError, NeoragError
from ingest.loaders import within

_ID = re.compile(r"^[0-9a-f]{32}$")
KINDS = ("ingest", "delete")
WRITE_EVERY = 0.5  # seconds between progress writes


class UnknownJob(NeoragError):
    pass


class WarmRunner(Protocol):
    """Where a job runs when it is free (app/job_worker.py's `WarmJobWorker`)."""

    def submit(self, path: Path) -> int | None:
        """Start the job in the file; the pid it runs in, or None when busy."""
        ...


_WARM: WarmRunner | None = None


def use_warm_worker(worker: WarmRunner | None) -> None:
    """Hand this process's jobs to `worker` while it is free (the API server installs one
    at start when `api.warm_jobs` is set); None: every job gets a process of its own."""
    global _WARM
    _WARM = worker


def jobs_dir(settings: Settings) -> Path:
    return settings.data_dir / "jobs"


def _write(path: Path, job: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(job, indent=1))
    os.replace(tmp, path)


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_job(settings: Settings, job_id: str) -> dict[str, Any]:
    path = jobs_dir(settings) / f"{job_id}.json"
    if not _ID.match(job_id) or not path.is_file():
        raise UnknownJob(f"no job {job_id!r}")
    job = json.loads(path.read_text())
    if job["state"] == "running" and not _alive(job.get("pid")):
        job["state"] = "failed"
        job["error"] = "the job process ended before finishing (killed or crashed)"
    elif job["state"] == "queued" and _never_started(path):
        job["state"] = "failed"
        job["error"] = "the job process never started; see its log in the jobs folder"
    return job


def _never_started(path: Path) -> bool:
    """A queued job whose process is gone, or was never launched 30 s after its file was
    written (the server died in between)."""
    try:
        return not _alive(int(path.with_suffix(".pid").read_text()))
    except (FileNotFoundError, ValueError):
        return time.time() - path.stat().st_mtime > 30


def list_jobs(settings: Settings, limit: int = 50) -> list[dict[str, Any]]:
    folder = jobs_dir(settings)
    files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)[-limit:]
    return [read_job(settings, p.stem) for p in reversed(files)]


def _check_free(settings: Settings) -> None:
    """Refuse at once when another writer holds the collection, or a job for it is queued
    or running (its process may not hold the lock yet): the new job would only fail."""
    where = (settings.backend, str(settings.data_dir.resolve()), settings.collection)
    for other in list_jobs(settings, limit=200):
        if other["state"] in ("queued", "running") and where == (
            other["backend"],
            other["data_dir"],
            other["collection"],
        ):
            raise LockedError(
                f"job {other['id']} is already writing collection {settings.collection!r}; "
                "wait for it to finish (GET /v1/jobs/{id})"
            )
    lock = ingest_lock(settings)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise LockedError(
            f"another ingest into collection {settings.collection!r} is running; "
            "wait for it to finish"
        ) from None
    lock.release()


def check_ingest_path(settings: Settings, path: Path) -> Path:
    """The path, if the API may ingest it: existing, under the allowed roots."""
    roots = settings.ingest_roots()
    if not within(path, roots):
        raise OutsideRoots(
            f"{path} is outside the allowed ingest roots ({', '.join(map(str, roots))}); "
            "set NEORAG_INGEST__ALLOWED_ROOTS to allow it"
        )
    if not path.exists():
        raise NeoragError(f"{path} does not exist")
    return path


def start_job(settings: Settings, kind: str, params: dict[str, Any]) -> dict[str, Any]:
    """Write the job file and start its process; returns the job as first written."""
    assert kind in KINDS
    folder = jobs_dir(settings)
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / "start.lock"), timeout=30):  # two workers, one check at a time
        _check_free(settings)
        return _launch(settings, folder, kind, params)


def _launch(settings: Settings, folder: Path, kind: str, params: dict[str, Any]) -> dict[str, Any]:
    job_id = uuid.uuid4().hex
    path = folder / f"{job_id}.json"
    job: dict[str, Any] = {
        "id": job_id,
        "kind": kind,
        "state": "queued",
        "backend": settings.backend,
        "collection": settings.collection,
        "data_dir": str(settings.data_dir.resolve()),
        "params": params,
        "created": time.time(),
        "started": None,
        "finished": None,
        "pid": None,
        "stages": {},
        "progress": 0.0,
        "report": None,
        "error": None,
    }
    _write(path, job)
    warm = _WARM.submit(path) if _WARM is not None else None
    if warm is not None:  # the server's warm worker took it (app/job_worker.py)
        path.with_suffix(".pid").write_text(str(warm))
        job["pid"] = warm
        return job
    log = open(folder / f"{job_id}.log", "wb")  # noqa: SIM115 - the child owns it
    child = subprocess.Popen(
        [sys.executable, "-m", "app.jobs", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a worker's restart does not stop the job
    )
    log.close()
    path.with_suffix(".pid").write_text(str(child.pid))
    threading.Thread(target=child.wait, daemon=True).start()  # reap it when it ends
    job["pid"] = child.pid  # the child writes its own pid into the file when it starts
    return job


class FileProgress:
    """The ingest `Progress` protocol, written into the job file (at most twice a second)."""

    def __init__(self, path: Path, job: dict[str, Any]) -> None:
        self.path, self.job = path, job
        self._written = 0.0

    def _save(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._written >= WRITE_EVERY:
            stages = [  # a stage with no total (the scan, chunks) counts once finished
                s for s in self.job["stages"].values() if s["total"] or s["state"] == "finished"
            ]
            self.job["progress"] = round(sum(map(_fraction, stages)) / max(len(stages), 1), 3)
            _write(self.path, self.job)
            self._written = now

    def start(self, stage: str, total: int | None) -> None:
        self.job["stages"][stage] = {
            "state": "running",
            "done": 0,
            "total": total,
            "t0": time.time(),
        }
        self._save(force=True)

    def advance(self, stage: str, n: int = 1) -> None:
        if stage not in self.job["stages"]:
            self.start(stage, None)
        self.job["stages"][stage]["done"] += n
        self._save()

    def finish(self, stage: str) -> None:
        s = self.job["stages"].get(stage)
        if s is not None:
            s["state"] = "finished"
            s["seconds"] = round(time.time() - s.pop("t0", time.time()), 2)
        self._save(force=True)


def _fraction(stage: dict[str, Any]) -> float:
    if stage["state"] == "finished":
        return 1.0
    return min(stage["done"] / stage["total"], 1.0) if stage["total"] else 0.0


def run_job(path: Path) -> int:
    """The job process: run the ingest or deletion, record the outcome and its metrics."""
    from app import metrics

    job = json.loads(path.read_text())
    job.update(state="running", started=time.time(), pid=os.getpid())
    _write(path, job)
    progress = FileProgress(path, job)
    outcome = "failed"
    try:
        settings = load_settings(
            backend=job["backend"], data_dir=Path(job["data_dir"]), collection=job["collection"]
        )
        if job["kind"] == "ingest":
            report = ingest_once(
                settings,
                Path(job["params"]["path"]),
                progress=progress,
                bounded=job["params"].get("bounded", True),
            )
        else:
            report = delete_documents(settings, list(job["params"]["doc_ids"]), progress=progress)
        job["report"] = report.as_dict()
        if report.nothing_indexed:  # the report says why, file by file
            job["error"] = report.nothing_indexed
        else:
            outcome = "succeeded"
    except NeoragError as exc:
        job["error"] = str(exc)
    except Exception as exc:  # the job's boundary: one line in the file, the trace in its log
        job["error"] = f"unexpected error ({type(exc).__name__}): {exc}"
        import traceback

        traceback.print_exc()
    job.update(
        state=outcome,
        finished=time.time(),
        progress=1.0 if outcome == "succeeded" else job["progress"],
    )
    _write(path, job)
    metrics.INGEST_RUNS.labels(job["collection"], job["kind"], outcome).inc()
    metrics.INGEST_SECONDS.labels(job["collection"], job["kind"]).observe(
        job["finished"] - job["started"]
    )
    return 0 if outcome == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(run_job(Path(sys.argv[1])))
