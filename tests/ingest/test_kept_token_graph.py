"""An ingest keeps the query processes' copy of the token graph on this machine's disk
(`GraphStore.keep_token_graph`), so a store opened after it, as a restarted server opens
one, maps the copy instead of reading the graph from the store, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.models import IngestModels
from ingest.runner import run_ingest
from tests.conftest import fresh_collection, neo4j_config_from_env
from tests.ingest.corpora import write_corpus

pytestmark = pytest.mark.slow
SETTINGS = Settings()
LOCAL = SETTINGS.algorithms.model_copy(update={"token_ppr": "local"})
SEEDS = ({"install": 1.0}, {"guide": 1.0, "faq": 1.0})


@pytest.fixture(scope="module")
def models() -> IngestModels:
    return IngestModels(SETTINGS.ingest.models)


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """Opens the same collection as often as asked, each time as a new process would."""
    opened: list[object] = []
    collection = fresh_collection()

    def open_store() -> object:
        if request.param == "embedded":
            store: object = EmbeddedStore(tmp_path / "data" / "graph.sqlite", collection)
        else:
            from graph.neo4j.store import Neo4jStore

            config = neo4j_config_from_env()
            store = Neo4jStore(config, collection, local_dir=tmp_path / "data")
        opened.append(store)
        return store

    yield open_store
    opened[0].clear()  # type: ignore[attr-defined]
    for store in opened:
        store.close()  # type: ignore[attr-defined]


def _never_read(store: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the token graph from the store fails the test."""
    if isinstance(store, EmbeddedStore):
        monkeypatch.setattr(store, "token_graph", lambda: pytest.fail("read the store again"))
    else:
        from graph.neo4j.token_mirror import TokenMirror

        monkeypatch.setattr(TokenMirror, "_read", lambda *a: pytest.fail("read the server"))


def test_a_store_opened_after_an_ingest_maps_its_kept_token_graph(
    opener, tmp_path: Path, models: IngestModels, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "docs"
    write_corpus(root, "A")
    ingested = opener()
    report = run_ingest(
        root, ingested, SETTINGS.ingest, SETTINGS.algorithms, tmp_path / "idx", models=models
    )
    assert "keep" in report.seconds
    assert (tmp_path / "data" / "token-graph" / "meta.json").is_file()
    expected = [ingested.token_ppr(s, LOCAL, top_k=5) for s in SEEDS]
    assert any(expected)
    restarted = opener()
    _never_read(restarted, monkeypatch)
    assert [restarted.token_ppr(s, LOCAL, top_k=5) for s in SEEDS] == expected
