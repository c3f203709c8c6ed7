"""The compute-thread budget of a process: how many threads its numeric libraries use.

When several processes share the cores (ingest workers, `neorag api` workers), each one's
BLAS, OpenMP (FAISS), torch and onnxruntime pools default to every core, so N processes
run N × cores threads that preempt each other. A process given a budget keeps all of its
pools within it; the budget travels to spawned children through the usual environment
variables, which is also where `budget()` reads it back.
"""

from __future__ import annotations

import os
import sys

from graph.threads import DEFAULT, VARIABLES, budget

__all__ = ["DEFAULT", "VARIABLES", "budget", "limit", "share"]


def share(processes: int, cores: int | None = None) -> int:
    """Threads per process when `processes` share this machine's (or `cores`) cores."""
    return max(1, (cores or os.cpu_count() or 1) // max(1, processes))


def limit(threads: int) -> None:
    """Pools loaded later read the environment; torch and those already loaded are told
    directly. Call again after loading a model that brings its own pool."""
    for var in VARIABLES:
        os.environ[var] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
