"""A `neorag api` started as users start it, for suites that measure serving: how long until
`/readyz` says ready, the first answers against the steady ones, and the memory the server
and its query processes hold (read from /proc: no extra dependency).

Memory is reported three ways, because the query processes map the same index files: the
largest single process's RSS, the tree's summed RSS (counts shared pages once per process)
and the tree's PSS (each shared page divided among the processes that map it, so the sum is
what the tree costs the machine).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
NEORAG = str(REPO / ".venv" / "bin" / "neorag")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def process_tree(pid: int) -> list[int]:
    """`pid` and every process under it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += _children(p)
    return out


def _status_kb(pid: int, field_name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_memory(pid: int) -> dict[str, Any]:
    """RSS, peak RSS and PSS (MB) of the process tree under `pid`."""
    pids = process_tree(pid)
    rss = {p: _status_kb(p, "VmRSS") for p in pids}
    hwm = {p: _status_kb(p, "VmHWM") for p in pids}
    return {
        "processes": len(pids),
        "max_process_rss_mb": round(max(rss.values(), default=0) / 1024, 1),
        "max_process_peak_rss_mb": round(max(hwm.values(), default=0) / 1024, 1),
        "tree_rss_mb": round(sum(rss.values()) / 1024, 1),
        "tree_pss_mb": round(sum(_pss_kb(p) for p in pids) / 1024, 1),
    }


@dataclass
class Served:
    url: str
    process: subprocess.Popen[bytes]
    ready_seconds: float = 0.0
    readyz: dict[str, Any] = field(default_factory=dict)

    def ask(self, question: str, route: str = "/v1/retrieve", **body: Any) -> dict[str, Any]:
        r = httpx.post(f"{self.url}{route}", json={"question": question, **body}, timeout=600)
        r.raise_for_status()
        return dict(r.json())

    def memory(self) -> dict[str, Any]:
        return tree_memory(self.process.pid)

    def version(self) -> str | None:
        r = httpx.get(f"{self.url}/readyz", timeout=60)
        return r.json().get("index_version") if r.status_code == 200 else None

    def wait_version_change(
        self, before: str | None, *, until: str | None = None, timeout: float = 900
    ) -> float | None:
        """The perf_counter time at which `/readyz` names another index version than
        `before` (or, with `until`, names `until`), or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.version()
            if (now == until) if until is not None else (now is not None and now != before):
                return time.perf_counter()
            time.sleep(0.2)
        return None


@contextmanager
def api_server(
    env: dict[str, str], log: Path, *, workers: int = 2, timeout: float = 1800
) -> Iterator[Served]:
    """Start `neorag api` on a free loopback port; yields once `/readyz` answers 200, with
    the seconds that took from the process's start."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    process = subprocess.Popen(
        [NEORAG, "api", "--port", str(port), "--workers", str(workers)],
        env={**os.environ, **env},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    served = Served(f"http://127.0.0.1:{port}", process)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise SystemExit(f"neorag api exited with {process.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise SystemExit(f"neorag api not ready after {timeout:.0f} s; see {log}")
            try:
                r = httpx.get(f"{served.url}/readyz", timeout=10)
                if r.status_code == 200:
                    served.readyz = dict(r.json())
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        served.ready_seconds = round(time.perf_counter() - t0, 2)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
