"""Wiring: builds the store and indexes the settings ask for. The CLI, the UI and the
evaluation harness all start here, so they always agree on where state lives."""

from __future__ import annotations

from pathlib import Path

from app.settings import Settings
from graph.base import GraphStore
from graph.errors import BackendUnavailable


def store_path(settings: Settings) -> Path:
    return settings.backend_dir / "graph.sqlite"


def index_dir(settings: Settings) -> Path:
    return settings.backend_dir / "indexes"


def open_store(settings: Settings) -> GraphStore:
    if settings.backend == "embedded":
        from graph.embedded.store import EmbeddedStore

        return EmbeddedStore(store_path(settings))
    if settings.backend == "neo4j":
        from graph.neo4j.store import Neo4jStore

        return Neo4jStore(settings.neo4j)
    raise BackendUnavailable(
        f"unknown backend {settings.backend!r}; set NEORAG_BACKEND=embedded or neo4j"
    )
