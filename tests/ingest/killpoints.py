"""The real `neorag` command, SIGKILLed the moment its ingest reaches a named point:

    python -m tests.ingest.killpoints POINT[@N] ingest PATH --json
    python -m tests.ingest.killpoints POINT[@N] --signal INT --stamp FILE ingest PATH

With `--signal`, the process sends itself that signal at the point instead (SIGINT as
Ctrl-C, SIGTERM as a service manager would) and carries on, having written the moment it
did so (`time.time()`) to FILE: the caller measures how long the command then takes to stop.

A kill timed by the clock lands wherever the machine's speed puts it, so covering every
stage takes many whole ingests and still misses some; a named point is reached exactly,
once per run, so one run per stage boundary covers them all. The process kills itself
with SIGKILL as the out-of-memory killer or a power cut would: nothing after the point
runs, no `finally`, no `atexit`, no flush. If the point is never reached the command ends
normally, which the caller reads as a failure (its exit status is not -SIGKILL).

Each point is a function the pipeline calls (ingest/runner.py's stage functions, and for
`inside-a-write` a step inside each backend's write transaction, before it commits); the
kill comes right after its N-th call returns (N defaults to 1).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

POINTS: dict[str, list[tuple[str, str]]] = {
    # inside the store transaction of a write, before it commits
    "inside-a-write": [
        ("graph.embedded.store", "EmbeddedStore._apply_cooccurrence"),
        ("graph.neo4j.store", "Neo4jStore._add"),
    ],
    "removal-written": [("ingest.runner", "_remove")],  # removed documents committed
    "batch-written": [("ingest.runner", "_write_batch")],  # one batch committed
    "scan-saved": [("ingest.runner", "ScanCache.save")],  # all written, before the edges
    "edges-written": [("ingest.runner", "refresh_chunk_edges")],  # before the analytics
    "analytics-written": [("ingest.runner", "refresh_analytics")],  # before the indexes
    "indexes-written": [("ingest.runner", "refresh_indexes")],  # before they are marked built
    # inside a batch: a model batch of chunks embedded, the batch's NER running beside it
    "chunks-embedded": [("ingest.runner", "chunks_embedded")],
}


def parse(spec: str) -> tuple[str, int]:
    point, _, nth = spec.partition("@")
    if point not in POINTS:
        raise SystemExit(f"unknown kill point {point!r}; one of {', '.join(POINTS)}")
    return point, int(nth or 1)


def arm(point: str, nth: int, sig: signal.Signals = signal.SIGKILL, stamp: str = "") -> None:
    """Wrap every function of `point` so the process gets `sig` after the N-th call among
    them (SIGKILL: it dies there)."""
    calls = 0

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def killing(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            result = original(*args, **kwargs)
            calls += 1
            if calls == nth:
                if stamp:
                    Path(stamp).write_text(repr(time.time()))
                os.kill(os.getpid(), sig)
            return result

        return killing

    for module, path in POINTS[point]:
        owner: Any = importlib.import_module(module)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, wrap(getattr(owner, name)))  # AttributeError: the point moved


def main() -> None:
    point, nth = parse(sys.argv[1])
    rest, sig, stamp = sys.argv[2:], signal.SIGKILL, ""
    while rest and rest[0] in ("--signal", "--stamp"):
        flag, value, *rest = rest
        if flag == "--signal":
            sig = signal.Signals[f"SIG{value}"]
        else:
            stamp = value
    arm(point, nth, sig, stamp)
    from app.cli import main as neorag

    sys.argv = ["neorag", *rest]
    neorag()


if __name__ == "__main__":
    main()
