"""What `neorag api` hands its query processes: the command line's choices and a thread
budget per process, so two query processes on two cores do not each run two-thread BLAS,
FAISS, torch and onnxruntime pools that preempt each other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.api.launch import worker_environment
from app.settings import Settings
from ingest import threads

PROBE = """
import json, faiss, numpy, torch
from threadpoolctl import threadpool_info
from ingest import threads
pools = {p["internal_api"]: p["num_threads"] for p in threadpool_info()}
print(json.dumps({"torch": torch.get_num_threads(), "faiss": faiss.omp_get_max_threads(),
                  "budget": threads.budget(), **pools}))
"""


def _settings(tmp_path: Path, **api: object) -> Settings:
    return Settings(data_dir=tmp_path, collection="notes", api=api)


def test_workers_get_their_share_of_the_cores(tmp_path: Path) -> None:
    env = worker_environment(_settings(tmp_path), "127.0.0.1", 8123, 2, {})
    assert env["NEORAG_COLLECTION"] == "notes"
    assert env["NEORAG_DATA_DIR"] == str(tmp_path.resolve())
    assert env["NEORAG_API__WORKERS"] == "2"  # the server's query processes
    assert Path(env["PROMETHEUS_MULTIPROC_DIR"]).is_dir()
    assert {env[v] for v in threads.VARIABLES} == {str(threads.share(2))}


def test_a_set_thread_variable_or_setting_wins(tmp_path: Path) -> None:
    env = worker_environment(_settings(tmp_path), "127.0.0.1", 8123, 2, {"OMP_NUM_THREADS": "3"})
    assert env["OMP_NUM_THREADS"] == "3"
    env = worker_environment(_settings(tmp_path, compute_threads=5), "127.0.0.1", 8123, 1, {})
    assert {env[v] for v in threads.VARIABLES} == {"5"}


def test_budget_reads_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.budget() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    assert threads.budget() == threads.DEFAULT
    assert threads.share(3, cores=2) == 1 and threads.share(2, cores=8) == 4


def test_a_worker_process_keeps_every_pool_within_its_budget(tmp_path: Path) -> None:
    env = worker_environment(_settings(tmp_path, compute_threads=1), "127.0.0.1", 8123, 2, {})
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo), **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert counts.pop("budget") == 1
    assert set(counts.values()) == {1}, counts
