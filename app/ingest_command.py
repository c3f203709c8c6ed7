"""`neorag ingest`: one run or a schedule, under a cross-process lock, with a report. The
ingest itself is app/ingest_service.py (its names are re-exported here for older callers)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from rich.console import Console

from app.ingest_service import (
    OutsideRoots,
    collection_writer,
    delete_documents,
    ingest_lock,
    ingest_once,
    run_full_analytics,
)
from app.ingest_view import EXIT_LOCKED, EXIT_OK, EXIT_SKIPPED, grouped_lines, print_report
from app.progress import RichProgress
from app.settings import Settings
from graph.errors import LockedError, NeoragError

__all__ = [
    "OutsideRoots",
    "collection_writer",
    "delete_documents",
    "grouped_lines",
    "ingest_lock",
    "ingest_once",
    "parse_interval",
    "print_report",
    "run_full_analytics",
    "run_ingest_command",
]

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_interval(text: str) -> float:
    m = _INTERVAL.match(text)
    if not m:
        raise NeoragError(f"cannot read interval {text!r}; use e.g. 30s, 15m, 1h")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if seconds < 1:
        raise NeoragError("the interval must be at least 1s")
    return seconds


def run_ingest_command(
    settings: Settings,
    path: Path,
    json_out: bool,
    rebuild: bool,
    every: str | None,
    out: Console,
    err: Console,
) -> int:
    interval = parse_interval(every) if every else None
    while True:
        try:
            if json_out:
                report = ingest_once(settings, path, rebuild)
            else:
                with RichProgress(err) as progress:
                    report = ingest_once(settings, path, rebuild, progress)
            code = EXIT_OK if report.ok else EXIT_SKIPPED
            if json_out:
                print(json.dumps(report.as_dict(), indent=2))
                if report.nothing_indexed:  # also where a person reading stderr sees it
                    err.print(report.nothing_indexed, highlight=False, soft_wrap=True)
            else:
                print_report(report, out)
        except LockedError as exc:
            if interval is None:
                err.print(f"[yellow]{exc}[/yellow]")
                return EXIT_LOCKED
            err.print(f"[yellow]{exc}; trying again in {interval:.0f}s[/yellow]")
            code = EXIT_LOCKED
        if interval is None:
            return code
        rebuild = False
        err.print(f"next ingest in {interval:.0f}s (pid {os.getpid()}; Ctrl-C to stop)")
        time.sleep(interval)
