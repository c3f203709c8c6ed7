"""Comparing two stored graphs: integer facts exactly, float edge weights to 1e-4 (the
same text embedded in a different batch can differ in the last bits)."""

from __future__ import annotations

from pathlib import Path

from graph.types import GraphSnapshot

FLOAT_TOLERANCE = 1e-4


def assert_same_graph(got: GraphSnapshot, want: GraphSnapshot) -> None:
    assert got.documents == want.documents, sorted(
        set(got.documents.items()) ^ set(want.documents.items())
    )[:10]
    assert got.chunks == want.chunks
    assert got.tokens == want.tokens
    assert got.has_token == want.has_token
    assert got.cooccurs == want.cooccurs
    assert got.entities == want.entities
    assert got.mentions == want.mentions
    assert set(got.chunk_edges) == set(want.chunk_edges), sorted(
        set(got.chunk_edges) ^ set(want.chunk_edges)
    )[:10]
    worst = max(
        (abs(got.chunk_edges[k] - want.chunk_edges[k]) for k in want.chunk_edges), default=0.0
    )
    assert worst <= FLOAT_TOLERANCE, f"edge weights differ by up to {worst}"


def uninterrupted_snapshot(root: Path, tmp_path: Path, collection: str) -> GraphSnapshot:
    """The graph one uninterrupted ingest of `root` builds (default settings, embedded),
    the reference crash and fault tests compare against."""
    from app.settings import Settings
    from graph.embedded.store import EmbeddedStore
    from ingest.runner import run_ingest
    from tests.conftest import shared_models

    settings = Settings()
    with EmbeddedStore(tmp_path / "reference.sqlite", collection) as ref:
        models = shared_models()
        index_dir = tmp_path / "reference-indexes"
        run_ingest(root, ref, settings.ingest, settings.algorithms, index_dir, models=models)
        return ref.snapshot()
