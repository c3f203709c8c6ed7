"""The database's one `chunk_embedding` vector index follows a collection's model unless
another collection's chunks are indexed with it: two collections of different dimensions
do not take it from each other (and rebuild it in turn on every write). Database-wide
state, so the test runs alone."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graph.neo4j.store import Neo4jStore
from tests.conftest import fresh_collection
from tests.graph.test_conformance import add, chunk

pytestmark = pytest.mark.exclusive


def _dimension(store: Neo4jStore) -> int | None:
    rows = store.read("vector_index_dimension")
    return rows[0]["dimension"] if rows else None


def _widened(doc: str, dims: int):
    c = chunk(doc, 0, "hub leafa")
    return dataclasses.replace(c, embedding=np.ones(dims, dtype=np.float32) / np.sqrt(dims))


def test_a_collection_in_use_keeps_the_index_until_it_is_gone(neo4j_config) -> None:
    first, second = (Neo4jStore(neo4j_config, fresh_collection()) for _ in range(2))
    try:
        add(first, {"a": [_widened("a", 4)]})
        assert _dimension(first) == 4
        add(second, {"b": [_widened("b", 8)]})
        assert _dimension(second) == 4, "the first collection's chunks still use it"
        first.clear()
        again = Neo4jStore(neo4j_config, second.collection)
        try:
            add(again, {"c": [_widened("c", 8)]})
            assert _dimension(again) == 8, "no other collection uses 4 any more"
        finally:
            again.close()
    finally:
        for store in (first, second):
            store.clear()
            store.close()
