"""Background ingest and delete jobs and the Prometheus metrics, through `neorag api` as
people start it: a real uvicorn with two worker processes, each job in the server's warm
job worker or a process of its own, metrics summed over all of them. Queries keep
answering from the published index while a job runs, and switch to the new one when it is
published."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.jobs import jobs_dir, read_job
from app.settings import Settings
from tests.app.api.conftest import wait_ready
from tests.app.test_streamlit_app import QUESTION, build_index, write_docs

NEORAG = str(Path(sys.executable).with_name("neorag"))


def more_docs(n: int) -> dict[str, str]:
    """`n` extra pages about made-up harbours (enough work for a job to take a while)."""
    return {
        f"harbour-{i}.md": (
            f"# Harbour {i}\n\nHarbour {i} lies on the Amber Sea, {i * 7} km east of Port "
            f"Veldt. The Ferrymen's Guild runs {i % 5 + 1} ferries from it.\n\n## Trade\n\n"
            f"Salted trout and amber pass through Harbour {i} on the way to Port Veldt.\n"
        )
        for i in range(n)
    }


@dataclass
class Api:
    url: str
    settings: Settings
    docs: Path

    def get(self, route: str, **kw: Any) -> httpx.Response:
        return httpx.get(f"{self.url}{route}", timeout=300, **kw)

    def post(self, route: str, **kw: Any) -> httpx.Response:
        return httpx.post(f"{self.url}{route}", timeout=300, **kw)

    def wait_job(self, job_id: str, timeout: float = 600) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.get(f"/v1/jobs/{job_id}").json()
            if job["state"] in ("succeeded", "failed"):
                return job
            time.sleep(0.5)
        raise AssertionError(f"job {job_id} did not finish")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("jobs")
    tiny = build_index(root)
    allowed = root / "allowed"
    allowed.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "NEORAG_BACKEND": "embedded",
        "NEORAG_DATA_DIR": str(tiny.data_dir),
        "NEORAG_INGEST__ALLOWED_ROOTS": str(allowed),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = open(root / "server.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [NEORAG, "api", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((root / "server.log").read_text()) from None
                time.sleep(0.5)
        wait_ready(url, 300)
        yield Api(url, Settings(backend="embedded", data_dir=tiny.data_dir), allowed)
    finally:
        server.terminate()
        server.wait(60)
        log.close()


def _ask(api: Api) -> tuple[int, str]:
    r = api.post("/v1/retrieve", json={"question": QUESTION})
    return r.status_code, r.headers.get("X-Neorag-Index-Version", "")


def test_ingest_job_while_queries_keep_answering(api: Api) -> None:
    status, before = _ask(api)
    assert status == 200 and before
    write_docs(api.docs / "harbours", more_docs(60))
    started = api.post("/v1/ingest", json={"path": str(api.docs / "harbours")})
    assert started.status_code == 202, started.text
    job = started.json()["job"]
    assert job["state"] == "queued" and job["kind"] == "ingest"
    # a second writer of the same collection is refused at once
    again = api.post("/v1/ingest", json={"path": str(api.docs / "harbours")})
    assert again.status_code == 409 and again.json()["error"]["type"] == "locked"

    answers: list[tuple[int, str, str]] = []
    done = threading.Event()

    def keep_asking() -> None:
        while not done.is_set():
            state = read_job(api.settings, job["id"])["state"]
            answers.append((*_ask(api), state))

    askers = [threading.Thread(target=keep_asking) for _ in range(2)]
    for t in askers:
        t.start()
    finished = api.wait_job(job["id"])
    time.sleep(1)
    done.set()
    for t in askers:
        t.join(120)
    assert finished["state"] == "succeeded", finished["error"]
    assert finished["progress"] == 1.0 and finished["report"]["documents"]["new"] == 60
    assert {"scan", "analytics", "indexes"} <= set(finished["stages"])
    assert all(s["state"] == "finished" for s in finished["stages"].values())

    _, after = _ask(api)
    assert after != before
    assert all(status == 200 for status, _, _ in answers)
    assert {v for _, v, _ in answers} <= {before, after}, "a response mixed index versions"
    while_running = [v for _, v, state in answers if state == "running"]
    assert while_running and before in while_running, "no query answered during the ingest"
    docs = api.get("/v1/documents").json()["documents"]
    assert len(docs) == 64
    listed = api.get("/v1/jobs").json()["jobs"]
    assert listed[0]["id"] == job["id"]


def test_upload_then_delete_jobs(api: Api) -> None:
    files = [("files", ("lighthouse.md", b"# Kell Lighthouse\n\nThe lighthouse of Kell Point.\n"))]
    r = api.post("/v1/documents", files=files)
    assert r.status_code == 202, r.text
    assert r.json()["saved"] == ["lighthouse.md"]
    job = api.wait_job(r.json()["job"]["id"])
    assert job["state"] == "succeeded", job["error"]
    docs = {d["title"]: d["id"] for d in api.get("/v1/documents").json()["documents"]}
    assert "Kell Lighthouse" in docs
    doc_id = docs["Kell Lighthouse"]
    r = httpx.delete(f"{api.url}/v1/documents/{doc_id}", timeout=300)
    assert r.status_code == 202 and r.json()["job"]["kind"] == "delete"
    assert api.wait_job(r.json()["job"]["id"])["state"] == "succeeded"
    titles = {d["title"] for d in api.get("/v1/documents").json()["documents"]}
    assert "Kell Lighthouse" not in titles and "Amber Sea" in titles


def test_a_killed_job_is_reported_failed(api: Api) -> None:
    write_docs(api.docs / "more", more_docs(30))
    job = api.post("/v1/ingest", json={"path": str(api.docs / "more")}).json()["job"]
    pid_file = (jobs_dir(api.settings) / job["id"]).with_suffix(".pid")
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    os.kill(int(pid_file.read_text()), 9)
    time.sleep(1)
    failed = api.wait_job(job["id"])
    assert failed["state"] == "failed"
    assert any(w in failed["error"] for w in ("ended before finishing", "never started"))
    # the collection is free again: the next job runs
    retry = api.post("/v1/ingest", json={"path": str(api.docs / "more")})
    assert retry.status_code == 202, retry.text
    assert api.wait_job(retry.json()["job"]["id"])["state"] == "succeeded"


def metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        head, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


def test_metrics_add_up_over_workers_and_jobs(api: Api) -> None:
    before = api.get("/metrics").text
    for _ in range(6):
        assert api.post("/v1/ask", json={"question": QUESTION, "mode": "tigrag"}).is_success
    assert api.post("/v1/ask", json={"question": "  "}).status_code == 400
    text = api.get("/metrics").text
    route = {"route": "/v1/ask", "mode": "tigrag"}
    asked = metric(text, "neorag_requests_total", status="200", **route)
    assert asked - metric(before, "neorag_requests_total", status="200", **route) == 6
    assert metric(text, "neorag_requests_total", route="/v1/ask", status="400") >= 1
    assert metric(text, "neorag_request_seconds_count", **route) >= 6
    assert metric(text, "neorag_request_seconds_bucket", le="+Inf", **route) >= 6
    # the jobs of the tests above ran in processes of their own and are counted
    assert metric(text, "neorag_ingest_runs_total", kind="ingest", outcome="succeeded") >= 2
    assert metric(text, "neorag_ingest_runs_total", kind="delete", outcome="succeeded") >= 1
    assert metric(text, "neorag_ingest_seconds_count", kind="ingest") >= 2
    assert "Bearer" not in text and QUESTION not in text


def test_jobs_run_in_the_warm_worker_with_its_models_loaded(api: Api) -> None:
    """One job after another runs in the server's warm job worker (app/job_worker.py): the
    same process, which loaded the models once, so the second job does not load them."""
    pids, model_seconds = [], []
    for i in range(2):
        write_docs(api.docs / f"warm-{i}", more_docs(2))
        job = api.post("/v1/ingest", json={"path": str(api.docs / f"warm-{i}")}).json()["job"]
        done = api.wait_job(job["id"])
        assert done["state"] == "succeeded", done["error"]
        pids.append(done["pid"])
        model_seconds.append(done["report"]["seconds"].get("models", 0.0))
    assert pids[0] == pids[1], "the second job got a process of its own"
    assert model_seconds[1] < 0.1, "the second job loaded the models again"


def test_neorag_ingest_hands_the_change_to_a_running_api(api: Api) -> None:
    """With NEORAG_API__URL set, `neorag ingest PATH` is a job of that server: the command
    shows the job's report, and the server's collection has the document."""
    write_docs(api.docs / "via-cli", {"quay.md": "# Kell Quay\n\nThe quay of Kell Point.\n"})
    env = {**os.environ, "NEORAG_API__URL": api.url, "NEORAG_DATA_DIR": "/nonexistent"}
    run = subprocess.run(
        [NEORAG, "ingest", str(api.docs / "via-cli"), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = __import__("json").loads(run.stdout)
    assert report["documents"]["new"] == 1
    jobs = api.get("/v1/jobs").json()["jobs"]
    assert jobs[0]["params"]["path"] == str((api.docs / "via-cli").resolve())
    titles = {d["title"] for d in api.get("/v1/documents").json()["documents"]}
    assert "Kell Quay" in titles
    refused = subprocess.run(
        [NEORAG, "ingest", "/etc", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0 and "outside the allowed ingest roots" in refused.stderr
