"""Ingest as a service: the one locked, logged ingest (and document deletion) that every
adapter calls — the `neorag ingest`/`delete` commands, the chat, the HTTP API's background
jobs. It prints nothing; progress goes to the `Progress` the caller passes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from filelock import FileLock, Timeout

from app.runlog import record_run
from app.services import index_dir, open_store, remove_legacy
from app.settings import Settings
from graph.base import GraphStore
from graph.errors import LockedError, NeoragError
from ingest.analytics_refresh import AnalyticsRun, refresh_analytics
from ingest.loaders import within
from ingest.report import IngestReport, Progress
from ingest.runner import remove_documents, run_ingest


def ingest_lock(settings: Settings) -> FileLock:
    """Two ingests into one collection never overlap (the second exits with a message)."""
    settings.collection_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.collection_dir / "ingest.lock"))


@contextmanager
def collection_writer(
    settings: Settings, *, rebuild: bool = False, create: bool = True
) -> Iterator[GraphStore]:
    """The store of `settings.collection`, held for writing: under the cross-process lock,
    so a second writer gets LockedError at once instead of waiting. `rebuild` into
    `default` also removes what an older neorag left there (it is being replaced);
    `create=False` (a pass over existing data) refuses an unknown collection."""
    lock = ingest_lock(settings)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise LockedError(
            f"another ingest into collection {settings.collection!r} "
            f"({settings.backend}) is running; wait for it to finish"
        ) from None
    try:
        with open_store(settings, create=create, rebuild=rebuild) as store, _database_lock(store):
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


def run_full_analytics(settings: Settings) -> AnalyticsRun:
    """The deferred full analytics pass (`neorag analytics`) over `settings.collection`,
    held for writing like an ingest; the collection must exist."""
    with collection_writer(settings, create=False) as store:
        return refresh_analytics(
            store, settings.algorithms, settings.ingest.analytics, added=None, full=True
        )
