"""The compute-thread budget of this process: how many threads its numeric work may use.

When several processes share the cores (`neorag api` workers, ingest workers), each is
given a share, passed down in the usual environment variables (`ingest.threads.limit`
sets them and the libraries' pools). Code that runs its own threads — the token PageRank's
parallel mat-vec — reads the same budget here, so a process given one core keeps to it.
"""

from __future__ import annotations

import os

VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
DEFAULT = 2  # when no budget is set


def budget(default: int = DEFAULT) -> int:
    """This process's budget: OMP_NUM_THREADS when set (by `limit` or the user)."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return default
