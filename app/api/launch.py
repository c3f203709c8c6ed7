"""`neorag api`: one uvicorn process over `create_app_from_env`, answering through a pool
of query processes.

Retrieval is CPU-bound Python, so one process uses one core however many threads it has;
the query processes (NEORAG_API__WORKERS, default 2) each hold their own engine behind one
queue (app/query_processes.py), and each keeps its numeric libraries to its share of the
cores (ingest/threads.py). What they share lives in files: the store and indexes, the job
files (app/jobs.py) and the metrics samples (a fresh PROMETHEUS_MULTIPROC_DIR per server
run, set here before any process or job imports prometheus_client).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import sys
from collections.abc import Mapping

from app.settings import Settings
from ingest import threads

LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(settings: Settings, host: str) -> str | None:
    """The warning for a server other machines can reach with no key required."""
    if is_loopback(host) or settings.api.api_keys():
        return None
    return (
        f"warning: binding {host} with no API keys: anyone who can reach this address can "
        "query and change the index; set NEORAG_API__KEYS (see README, API keys)"
    )


def worker_environment(
    settings: Settings, host: str, port: int, workers: int, current: Mapping[str, str]
) -> dict[str, str]:
    """What the server and its query processes must inherit: the command line's choices
    (they read their settings from the environment), a fresh metrics folder for this server
    run, and each query process's share of the cores unless the thread variables are set
    already."""
    samples = settings.data_dir.resolve() / "run" / f"metrics-{port}"
    shutil.rmtree(samples, ignore_errors=True)
    samples.mkdir(parents=True, exist_ok=True)
    env = {
        "PROMETHEUS_MULTIPROC_DIR": str(samples),
        "NEORAG_BACKEND": settings.backend,
        "NEORAG_DATA_DIR": str(settings.data_dir.resolve()),
        "NEORAG_COLLECTION": settings.collection,
        "NEORAG_API__HOST": host,
        "NEORAG_API__WORKERS": str(workers),
    }
    per_worker = str(settings.api.compute_threads or threads.share(workers))
    env |= {var: current.get(var, per_worker) for var in threads.VARIABLES}
    return env


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    import uvicorn

    warning = exposure_warning(settings, host)
    if warning:
        print(warning, file=sys.stderr)
    os.environ.update(worker_environment(settings, host, port, workers, os.environ))
    uvicorn.run(
        "app.api.server:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        proxy_headers=True,
        # The server, not the app, owns the prefix (FastAPI deprecated its root_path).
        root_path=settings.api.root_path,
        forwarded_allow_ips=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
        log_level="info",
        timeout_graceful_shutdown=10,
    )
