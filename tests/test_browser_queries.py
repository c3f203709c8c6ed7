"""The saved Neo4j Browser queries (cypher/browser/) run on a real graph.

The guide folder of the sample corpus is ingested into the real Neo4j exactly as
`neorag ingest sample_corpus` would lay it out (collection `default`, document ids ending
in `guide/<file>`), then every
saved query must return rows twice: with parameters picked from the data, and with the
`:param` hints written in the file, so the examples a person pastes keep working.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import cypher
from app.cypher_service import execute
from app.settings import Settings
from ingest.runner import run_ingest

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "sample_corpus" / "guide"
EXPECTED = {
    "schema_overview",
    "document_chunks",
    "token_neighbourhood",
    "community",
    "answer_path",
    "top_entities",
}


def test_every_saved_query_has_a_title_and_hints_for_its_parameters() -> None:
    queries = cypher.browser_queries()
    assert set(queries) >= EXPECTED
    for name, text in queries.items():
        assert text.startswith("// title:"), name
        assert cypher.browser_title(name) != name
        used = set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text))
        assert used == set(cypher.browser_params(name)), f"{name}: :param hints vs {used}"


def test_unknown_saved_query_names_the_choices() -> None:
    with pytest.raises(KeyError, match="schema_overview"):
        cypher.browser_params("no_such_query")


def _rows(store: Any, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Run a saved query as `neorag cypher` would, read-only: Browser users paste these into
    a live database, so each must pass the read-only guard too."""
    result = execute(
        store.driver,
        store.cfg,
        cypher.browser_queries()[name],
        params,
        write=False,
        timeout_seconds=60,
        max_rows=100_000,
    )
    assert not result.truncated
    return result.rows


def _one(store: Any, query: str, **params: Any) -> Any:
    records, _, _ = store.driver.execute_query(query, params, database_=store.cfg.database)
    assert records, f"no data for: {query}"
    return records[0][0]


def _params_from_data(store: Any) -> dict[str, dict[str, Any]]:
    c = store.collection
    doc_id = _one(
        store,
        "MATCH (d:Document {collection: $c})-[:HAS_CHUNK]->(c:Chunk) "
        "WITH d, count(c) AS n RETURN d.id ORDER BY n DESC, d.id LIMIT 1",
        c=c,
    )
    ids = _one(store, "MATCH (c:Chunk {doc_id: $doc_id}) RETURN collect(c.id)", doc_id=doc_id)
    token = _one(
        store,
        "MATCH (t:Token {collection: $c})-[r:CO_OCCURS]-() "
        "WITH t, count(r) AS n RETURN t.text ORDER BY n DESC, t.text LIMIT 1",
        c=c,
    )
    community = _one(
        store,
        "MATCH (m:Community {collection: $c}) RETURN m.id ORDER BY m.size DESC LIMIT 1",
        c=c,
    )
    return {
        "schema_overview": {},
        "document_chunks": {"collection": c, "doc": doc_id},
        "token_neighbourhood": {"collection": c, "token": token},
        "community": {"collection": c, "community": community},
        "answer_path": {"collection": c, "ids": ids},
        "top_entities": {"collection": c},
    }


@pytest.fixture()
def default_collection(neo4j_config: Any) -> Any:
    """The hints name the `default` collection, as a person's first ingest does; in the
    marked test database only that collection is used and cleared."""
    from graph.neo4j.store import Neo4jStore

    store = Neo4jStore(neo4j_config, "default")
    store.clear()
    try:
        yield store
    finally:
        store.clear()
        store.close()


def test_every_saved_query_returns_rows_on_the_sample_guide(
    default_collection: Any, tmp_path: Path
) -> None:
    neo4j_store = default_collection
    corpus = tmp_path / "corpus"
    shutil.copytree(GUIDE, corpus / "guide")
    settings = Settings()
    report = run_ingest(
        corpus, neo4j_store, settings.ingest, settings.algorithms, tmp_path / "indexes"
    )
    assert report.ok and report.chunks > 0 and report.communities > 0

    from_data = _params_from_data(neo4j_store)
    assert set(from_data) == set(cypher.browser_queries())
    empty = []
    for name, params in from_data.items():
        if not _rows(neo4j_store, name, params):
            empty.append(f"{name} with data parameters {params}")
        hints = cypher.browser_params(name)
        if not _rows(neo4j_store, name, hints):
            empty.append(f"{name} with its :param hints {hints} (update the hints)")
    assert not empty, "saved queries without rows: " + "; ".join(empty)

    # The path behind an answer shows more than the documents: typed edges and entities.
    links = {r["link"] for r in _rows(neo4j_store, "answer_path", from_data["answer_path"])}
    assert "document" in links
    assert links & {"NEXT", "SAME_SECTION", "SEMANTIC", "SHARES_ENTITY", "CITES", "UTILITY"}
    assert any(link.startswith("entity: ") for link in links), links

    kinds = {(r["kind"], r["name"]): r["count"] for r in _rows(neo4j_store, "schema_overview", {})}
    assert kinds[("node", "Document")] >= len(list(GUIDE.glob("*.md")))
    assert kinds[("relationship", "CITES")] > 0  # the guide's pages link to each other
