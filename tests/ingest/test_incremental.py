"""Incremental re-ingest is exact (A then A′ equals a fresh A′) on both backends, and both
backends build the same graph from the same documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.models import IngestModels
from ingest.runner import run_ingest
from tests.ids import names
from tests.ingest.corpora import write_corpus
from tests.ingest.graph_compare import assert_same_graph

pytestmark = pytest.mark.slow
SETTINGS = Settings()


@pytest.fixture(scope="module")
def models() -> IngestModels:
    return IngestModels(SETTINGS.ingest.models)


def ingest(store, root: Path, index_dir: Path, models: IngestModels):
    return run_ingest(root, store, SETTINGS.ingest, SETTINGS.algorithms, index_dir, models=models)


def test_reingest_is_exact(store, tmp_path: Path, models: IngestModels) -> None:
    root = tmp_path / "docs"
    write_corpus(root, "A")
    first = ingest(store, root, tmp_path / "idx", models)
    assert len(first.new) == 9 and not first.skipped

    again = ingest(store, root, tmp_path / "idx", models)
    assert (again.new, again.changed, again.removed, again.unchanged) == ([], [], [], 9)
    assert not again.derived_rebuilt

    write_corpus(root, "A2")
    second = ingest(store, root, tmp_path / "idx", models)
    assert sorted(names(second.changed, root)) == ["guide/install.md", "p17"]
    assert sorted(names(second.removed, root)) == ["notes.txt", "p19"]
    assert sorted(names(second.new, root)) == ["guide/faq.md", "p24"]
    incremental = store.snapshot()

    store.clear()
    fresh_report = ingest(store, root, tmp_path / "idx2", models)
    assert len(fresh_report.new) == 9
    assert_same_graph(incremental, store.snapshot())


@pytest.mark.neo4j
@pytest.mark.exclusive  # reads the database's one vector index, which others may hold
def test_both_backends_build_the_same_graph(
    neo4j_store,
    tmp_path: Path,
    models: IngestModels,
) -> None:
    root = write_corpus(tmp_path / "docs", "A2")
    with EmbeddedStore(tmp_path / "e.sqlite", neo4j_store.collection) as embedded:
        ingest(embedded, root, tmp_path / "i1", models)
        ingest(neo4j_store, root, tmp_path / "i2", models)
        want, got = embedded.snapshot(), neo4j_store.snapshot()
        assert_same_graph(got, want)
        # The Neo4j vector index answers with the same nearest chunk as FAISS would.
        vectors = embedded.chunk_vectors("embedding")
        some_id = sorted(vectors)[0]
        vector = [float(x) for x in vectors[some_id]]
        hits = neo4j_store.read("vector_search", k=1, candidates=50, vector=vector)
        assert hits and hits[0]["id"] == some_id
        e_status, n_status = embedded.status(), neo4j_store.status()
        assert e_status.edges == n_status.edges
        assert (e_status.documents, e_status.chunks, e_status.tokens) == (
            n_status.documents,
            n_status.chunks,
            n_status.tokens,
        )


def test_reingest_updates_the_search_files_from_the_change(store, tmp_path: Path, models) -> None:
    """The ingest's index stage writes a delta for a small change, and the published files
    then equal a full build from the same store; --rebuild builds them in full."""
    from ingest.config import IngestConfig
    from ingest.index_files import read_manifest
    from ingest.indexes import SearchIndexes
    from ingest.tokens import Analyzer
    from tests.ingest.test_indexes import assert_same_indexes

    cfg = IngestConfig(index={"compact_fraction": 1.0})  # this corpus is tiny: no fold
    root, idx = tmp_path / "docs", tmp_path / "idx"
    write_corpus(root, "A")
    first = run_ingest(root, store, cfg, SETTINGS.algorithms, idx, models=models)
    write_corpus(root, "A2")
    second = run_ingest(root, store, cfg, SETTINGS.algorithms, idx, models=models)
    assert (first.indexes, second.indexes) == ("full", "delta")
    manifest = read_manifest(idx)
    assert len(manifest.segments) == 2
    analyzer = Analyzer(cfg.tokens)
    fresh = SearchIndexes.build(store, tmp_path / "fresh", manifest.key, analyzer, cfg.index)
    assert_same_indexes(SearchIndexes.load(idx, manifest.key), fresh)
    rebuilt = run_ingest(root, store, cfg, SETTINGS.algorithms, idx, models=models, rebuild=True)
    assert rebuilt.indexes == "full" and len(read_manifest(idx).segments) == 1
