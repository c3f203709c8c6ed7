"""Database serving's reads (graph/neo4j/search.py) against the real server: one
collection's chunks only, any token a safe Lucene term, and title keys stored for documents
an older neorag wrote without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.settings import Settings
from graph.neo4j.search import LUCENE_MAX_CLAUSES, Neo4jSearch, NotPrepared, lucene_terms
from graph.neo4j.store import Neo4jStore
from graph.neo4j.store_base import TITLE_KEYS
from graph.titles import folded_title_key
from ingest.runner import run_ingest
from tests.conftest import fresh_collection, shared_models
from tests.ingest.corpora import write_corpus


def test_lucene_terms_quote_every_term_and_keep_the_largest_weights() -> None:
    terms = lucene_terms({'say "x"': 0.5, "c:\\d": 0.25, "AND": 1.0, "zero": 0.0, "neg": -1})
    assert terms == 'tokens:"AND"^1 tokens:"say \\"x\\""^0.5 tokens:"c:\\\\d"^0.25'
    many = lucene_terms({f"t{i}": 1.0 + i for i in range(LUCENE_MAX_CLAUSES + 50)})
    assert many.count("tokens:") == LUCENE_MAX_CLAUSES
    assert f'"t{LUCENE_MAX_CLAUSES + 49}"' in many and '"t0"' not in many


@pytest.fixture()
def two_collections(neo4j_store: Neo4jStore, neo4j_config, tmp_path: Path):
    """The same documents in two collections."""
    settings = Settings()
    other = Neo4jStore(neo4j_config, fresh_collection())
    root = write_corpus(tmp_path / "docs", "A")
    try:
        for store in (neo4j_store, other):
            run_ingest(
                root,
                store,
                settings.ingest,
                settings.algorithms,
                tmp_path / store.collection,
                models=shared_models(),
            )
        yield neo4j_store, other
    finally:
        other.clear()
        other.close()


@pytest.mark.neo4j
def test_reads_answer_from_one_collection(two_collections) -> None:
    mine, _other = two_collections
    search = Neo4jSearch(mine)
    search.check_prepared()
    prefix = f"{mine.collection}:"
    hits = search.lexical({"lothair": 1.0, "ermengarde": 0.5}, 50)
    assert hits and all(cid.startswith(prefix) for cid, _ in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    first = hits[0][0]
    vector = search.embeddings([first])[first]
    nearest = search.nearest(vector, 5)
    assert len(nearest) == 5 and all(cid.startswith(prefix) for cid, _ in nearest)
    assert nearest[0][0] == first and nearest[0][1] == pytest.approx(1.0, abs=1e-3)
    # Terms that are Lucene syntax, or hold it, are matched as terms or not at all.
    assert search.lexical({'a"b': 1.0, "x\\": 1.0, "(c++)": 1.0, "OR": 1.0, "*": 1.0}, 5) == []
    assert search.known_tokens(["lothair", "no-such-token"]) == {"lothair"}
    assert np.isfinite(vector).all()


@pytest.mark.neo4j
def test_title_keys_are_stored_and_backfilled_once(two_collections, neo4j_config) -> None:
    mine, _ = two_collections
    search = Neo4jSearch(mine)
    titles = {d: t for d, (t, _) in mine.document_titles().items()}
    keys = [folded_title_key(t) for t in titles.values()]
    assert set(search.titles_by_key(keys)) == set(titles)
    # As an older neorag left them: no title keys, no mark.
    mine.write("set_title_keys", rows=[{"id": d, "key": None} for d in titles])
    mine.write("meta_set", key=TITLE_KEYS, value=None)
    with pytest.raises(NotPrepared, match="neorag ingest"):
        search.check_prepared()
    assert search.titles_by_key(keys) == {}
    again = Neo4jStore(neo4j_config, mine.collection)
    try:
        again.ensure_schema()
    finally:
        again.close()
    search.check_prepared()
    assert set(search.titles_by_key(keys)) == set(titles)
