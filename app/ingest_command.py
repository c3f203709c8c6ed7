"""`neorag ingest`: one run or a schedule, under a cross-process lock, with a report. The
ingest itself is app/ingest_service.py (its names are re-exported here for older callers)."""

from __future__ import annotations

import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from app.ingest_service import (
    OutsideRoots,
    collection_writer,
    delete_documents,
    ingest_lock,
    ingest_once,
    run_full_analytics,
)
from app.progress import RichProgress
from app.settings import Settings
from graph.errors import LockedError, NeoragError
from ingest.loaders import SUPPORTED_EXTENSIONS
from ingest.loaders.types import NOT_PROBLEMS, UNSUPPORTED
from ingest.report import IngestReport, Skip

__all__ = [
    "OutsideRoots",
    "collection_writer",
    "delete_documents",
    "ingest_lock",
    "ingest_once",
    "parse_interval",
    "run_full_analytics",
    "run_ingest_command",
]
EXIT_OK, EXIT_SKIPPED, EXIT_LOCKED = 0, 1, 3
NAMES_SHOWN = 10  # unsupported files named per reason in the summary (--json has them all)
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_interval(text: str) -> float:
    m = _INTERVAL.match(text)
    if not m:
        raise NeoragError(f"cannot read interval {text!r}; use e.g. 30s, 15m, 1h")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if seconds < 1:
        raise NeoragError("the interval must be at least 1s")
    return seconds


def print_report(report: IngestReport, console: Console) -> None:
    docs = Table(title="documents", show_header=True)
    for col in ("new", "changed", "removed", "unchanged", "skipped"):
        docs.add_column(col, justify="right")
    docs.add_row(
        str(len(report.new)),
        str(len(report.changed)),
        str(len(report.removed)),
        str(report.unchanged),
        str(len(report.skipped)),
    )
    console.print(docs)
    graph = Table(title="graph", show_header=False)
    graph.add_row("chunks", str(report.chunks))
    graph.add_row("tokens", str(report.tokens))
    for kind, n in report.edges.items():
        graph.add_row(f"edges {kind}", str(n))
    graph.add_row("communities", str(report.communities))
    if report.modularity is not None:
        graph.add_row("modularity", f"{report.modularity:.3f}")
    if report.edge_refresh:
        graph.add_row("chunk edges", report.edge_refresh)
        graph.add_row("analytics", report.analytics_refresh)
    console.print(graph)
    times = Table(title="seconds per stage", show_header=False)
    for stage, s in report.seconds.items():
        times.add_row(stage, f"{s:.2f}")
    console.print(times)
    if report.reembedded:
        console.print(
            f"re-embedded {len(report.reembedded)} documents from other paths with the new "
            "embedding model (re-ingest their paths to re-chunk them too)"
        )
    for w in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
    for s in report.problems:
        console.print(
            f"[yellow]skipped[/yellow] {s.source}: {s.reason}", highlight=False, soft_wrap=True
        )
    listed = [s for s in report.skipped if s.kind in NOT_PROBLEMS]
    for line in grouped_lines(listed, Path(report.path)):
        console.print(line, highlight=False, soft_wrap=True)
    if any(s.kind == UNSUPPORTED for s in listed):
        console.print(f"(neorag reads {' '.join(SUPPORTED_EXTENSIONS)})", highlight=False)
    if report.nothing_indexed:
        console.print(f"[red]{report.nothing_indexed}[/red]", highlight=False, soft_wrap=True)


def grouped_lines(skips: list[Skip], root: Path) -> list[str]:
    """One line per reason (`unsupported extension .png`, `not a regular file`, ...) with
    its count and the first files' paths under `root`: a folder of notes with hundreds of
    images gets a line, not a screenful."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for s in skips:
        path = Path(s.source)
        inside = path.is_relative_to(root) and path != root
        by_reason[s.reason].append(str(path.relative_to(root)) if inside else s.source)
    lines = []
    for reason, names in sorted(by_reason.items()):
        shown = ", ".join(names[:NAMES_SHOWN])
        if len(names) > NAMES_SHOWN:
            shown += f" and {len(names) - NAMES_SHOWN} more"
        files = f"{len(names)} file{'s' * (len(names) != 1)}"
        lines.append(f"[yellow]skipped[/yellow] {files}, {reason}: {shown}")
    return lines


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
