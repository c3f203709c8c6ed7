"""`neorag ingest`: one run or a schedule, under a cross-process lock, with a report."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from filelock import FileLock, Timeout
from rich.console import Console
from rich.table import Table

from app.progress import RichProgress
from app.runlog import record_run
from app.services import index_dir, open_store, remove_legacy
from app.settings import Settings
from graph.base import GraphStore
from graph.errors import LockedError, NeoragError
from ingest.loaders import within
from ingest.report import IngestReport, Progress
from ingest.runner import remove_documents, run_ingest

EXIT_OK, EXIT_SKIPPED, EXIT_LOCKED = 0, 1, 3
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_interval(text: str) -> float:
    m = _INTERVAL.match(text)
    if not m:
        raise NeoragError(f"cannot read interval {text!r}; use e.g. 30s, 15m, 1h")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if seconds < 1:
        raise NeoragError("the interval must be at least 1s")
    return seconds


def ingest_lock(settings: Settings) -> FileLock:
    """Two ingests into one collection never overlap (the second exits with a message)."""
    settings.collection_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.collection_dir / "ingest.lock"))


@contextmanager
def collection_writer(settings: Settings, *, rebuild: bool = False) -> Iterator[GraphStore]:
    """The store of `settings.collection`, held for writing: under the cross-process lock,
    so a second writer gets LockedError at once instead of waiting. `rebuild` into
    `default` also removes what an older neorag left there (it is being replaced)."""
    lock = ingest_lock(settings)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise LockedError(
            f"another ingest into collection {settings.collection!r} "
            f"({settings.backend}) is running; wait for it to finish"
        ) from None
    try:
        with open_store(settings, create=True, rebuild=rebuild) as store, _database_lock(store):
            if rebuild:
                remove_legacy(settings, store)
            yield store
    finally:
        lock.release()


def _database_lock(store: GraphStore) -> AbstractContextManager[object]:
    """On Neo4j, also the lock held in the database (writers with other data dirs or on
    other machines); the embedded store lives in the data dir, which the file lock covers."""
    if store.backend != "neo4j":
        return nullcontext()
    from graph.neo4j.lock import DatabaseLock

    return DatabaseLock(store)  # type: ignore[arg-type]


def ingest_once(
    settings: Settings,
    path: Path,
    rebuild: bool = False,
    progress: Progress | None = None,
    *,
    bounded: bool = False,
) -> IngestReport:
    """One ingest into `settings.collection`, under the lock, recorded in the run log.
    `bounded` (the chat and the API) requires the path, and every file under it after
    resolving symbolic links, to lie under the allowed ingest roots."""
    roots = settings.ingest_roots() if bounded else None
    if not path.exists():
        raise NeoragError(f"{path} does not exist")
    if roots is not None and not within(path, roots):
        raise OutsideRoots(
            f"{path} is outside the allowed ingest roots ({', '.join(map(str, roots))}); "
            "set NEORAG_INGEST__ALLOWED_ROOTS to allow it"
        )
    with collection_writer(settings, rebuild=rebuild) as store:
        report = run_ingest(
            path,
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            progress=progress,
            rebuild=rebuild,
            allowed_roots=roots,
        )
    record_run(settings, report)
    return report


def delete_documents(
    settings: Settings, doc_ids: list[str], progress: Progress | None = None
) -> IngestReport:
    """Delete the named documents of `settings.collection` (under the ingest lock)."""
    with collection_writer(settings) as store:
        report = remove_documents(
            doc_ids,
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            progress=progress,
        )
    record_run(settings, report)
    return report


class OutsideRoots(NeoragError):
    pass


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
    for s in report.skipped:
        console.print(f"[yellow]skipped[/yellow] {s.source}: {s.reason}", highlight=False)


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
