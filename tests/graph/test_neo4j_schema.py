"""Two writers that open a fresh database at once both create its constraints and indexes;
the later `CREATE … IF NOT EXISTS` can pass its check before the earlier one commits, and
the server then answers that the rule already exists. The schema step takes that answer
as done, and only that one. The server is real: each schema statement is sent again
without `IF NOT EXISTS`, which draws the same answer from it."""

from __future__ import annotations

import pytest

import cypher
from graph.errors import NeoragError
from graph.neo4j.store_base import _CONCURRENT_SCHEMA

pytestmark = pytest.mark.neo4j


def _creates() -> list[str]:
    return [
        s.replace(" IF NOT EXISTS", "")
        for s in cypher.statements("schema")
        if s.lstrip().startswith("CREATE")
    ]


def test_a_rule_another_writer_created_first_is_taken_as_done(neo4j_store) -> None:
    neo4j_store.ensure_schema()
    creates = _creates()
    assert len(creates) >= 10
    for statement in creates:
        neo4j_store.write_raw(statement, tolerate=_CONCURRENT_SCHEMA)


def test_a_vector_index_another_writer_created_first_is_taken_as_done(neo4j_store) -> None:
    neo4j_store.ensure_schema(384)  # the bundled model's: the index the other tests use
    held = neo4j_store.read("vector_index_dimension")[0]["dimension"]
    statement = cypher.load("vector_index").replace(" IF NOT EXISTS", "")
    neo4j_store.write_raw(statement, {"dimension": held}, tolerate=_CONCURRENT_SCHEMA)


def test_only_that_answer_is_taken_as_done(neo4j_store) -> None:
    neo4j_store.ensure_schema()
    statement = _creates()[0]
    with pytest.raises(NeoragError, match="AlreadyExists"):
        neo4j_store.write_raw(statement)
    with pytest.raises(NeoragError, match="SyntaxError"):
        neo4j_store.write_raw(statement + " NONSENSE", tolerate=_CONCURRENT_SCHEMA)
