"""How an ingest's report is shown in a terminal: by `neorag ingest`, whether the ingest ran
in the command's process or as a job of a running `neorag api` (so this module imports
nothing the remote route does not need)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ingest.loaders import SUPPORTED_EXTENSIONS
from ingest.loaders.types import NOT_PROBLEMS, UNSUPPORTED
from ingest.report import IngestReport, Skip

if TYPE_CHECKING:
    from app.settings import Settings

EXIT_OK, EXIT_SKIPPED, EXIT_LOCKED = 0, 1, 3
NAMES_SHOWN = 10  # unsupported files named per reason in the summary (--json has them all)


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


def run_remote_ingest(
    settings: Settings, path: Path, json_out: bool, out: Console, err: Console
) -> int:
    """`neorag ingest PATH` with NEORAG_API__URL set: the running API ingests PATH as a job
    (its warm job worker has the models loaded) and this command shows its progress and
    report, as a local run would."""
    from app.api_client import ingest_remote
    from app.progress import RichProgress
    from graph.errors import NeoragError

    if json_out:
        job = ingest_remote(settings, path)
    else:
        with RichProgress(err) as progress:
            job = ingest_remote(settings, path, progress)
    if job["report"] is None:
        raise NeoragError(f"the API's ingest job {job['id']} failed: {job['error']}")
    report = IngestReport.from_dict(job["report"])
    if json_out:
        print(json.dumps(job["report"], indent=2))
    else:
        print_report(report, out)
    return EXIT_OK if report.ok else EXIT_SKIPPED
