"""Wiring: builds the store and indexes the settings ask for. The CLI, the UI, the API and
the evaluation harness all start here, so they always agree on where state lives.

Layout under the data dir: `<backend>/collections/<name>/` holds a collection's local state
(the embedded SQLite store, the FAISS/BM25 files, the run log, the ingest lock); uploads
live in `uploads/<name>/`. An older neorag kept one store directly in `embedded/`; it is
reported (never mixed into a collection) until `ingest --rebuild` replaces it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from app.settings import Settings
from graph.base import GraphStore
from graph.collections import DEFAULT_COLLECTION
from graph.errors import BackendUnavailable, LegacyStore, UnknownCollection

_LEGACY_FILES = ("graph.sqlite", "graph.sqlite-wal", "graph.sqlite-shm")


def store_path(settings: Settings) -> Path:
    return settings.collection_dir / "graph.sqlite"


def index_dir(settings: Settings) -> Path:
    return settings.collection_dir / "indexes"


def legacy_embedded_store(settings: Settings) -> Path | None:
    """The single store an older neorag wrote (before collections), if it is still there."""
    path = settings.data_dir / "embedded" / "graph.sqlite"
    return path if path.exists() else None


def remove_legacy(settings: Settings, store: GraphStore) -> None:
    """`ingest --rebuild` into `default` replaces what an older neorag kept: its single
    embedded store, or its Neo4j nodes without a collection."""
    if settings.collection != DEFAULT_COLLECTION:
        return
    if settings.backend == "embedded":
        folder = settings.data_dir / "embedded"
        for name in _LEGACY_FILES:
            (folder / name).unlink(missing_ok=True)
        shutil.rmtree(folder / "indexes", ignore_errors=True)
    elif hasattr(store, "clear_legacy"):
        store.clear_legacy()


def open_store(settings: Settings, *, create: bool = False, rebuild: bool = False) -> GraphStore:
    """The store of `settings.collection`. A collection other than `default` must exist
    unless `create` (writers), so a typo in a name never conjures an empty one. An older
    neorag's store is an error naming the fix, unless `rebuild` (about to replace it)."""
    legacy_ok = rebuild or settings.collection != DEFAULT_COLLECTION
    must_exist = not (create or rebuild) and settings.collection != DEFAULT_COLLECTION
    if settings.backend == "embedded":
        from graph.embedded.store import EmbeddedStore

        legacy = legacy_embedded_store(settings)
        if legacy is not None and not legacy_ok:
            raise LegacyStore(
                f"{legacy} is an index written by an older neorag (document ids without "
                "collections); re-index with `neorag ingest PATH --rebuild`, which replaces it"
            )
        if must_exist and not store_path(settings).exists():
            raise unknown_collection(settings)
        return EmbeddedStore(store_path(settings), settings.collection)
    if settings.backend == "neo4j":
        from graph.neo4j.store import Neo4jStore

        store = Neo4jStore(
            settings.neo4j,
            settings.collection,
            allow_legacy=legacy_ok,
            local_dir=settings.collection_dir,
        )
        if must_exist and store.get_meta("created_at") is None:
            store.close()
            raise unknown_collection(settings)
        return store
    raise BackendUnavailable(
        f"unknown backend {settings.backend!r}; set NEORAG_BACKEND=embedded or neo4j"
    )


def unknown_collection(settings: Settings) -> UnknownCollection:
    return UnknownCollection(
        f"no collection {settings.collection!r} on the {settings.backend} backend; "
        "`neorag collections` lists them, `neorag ingest PATH --collection NAME` creates one"
    )
