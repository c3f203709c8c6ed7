"""GDS work goes to one member: through a routing (`neo4j://`) driver, and through a
separate driver for a dedicated GDS member (`NEO4J_GDS_URI`), the projections and the
PageRank scores are those of the direct connection. One machine has one member, so this
checks the wiring a cluster relies on: catalog, projection and algorithm calls share the
GDS driver and its write routing, data reads use the routed one."""

from __future__ import annotations

import pytest

from app.settings import Settings
from graph.neo4j.store import Neo4jStore
from tests.conftest import fresh_collection
from tests.graph import test_conformance as conformance

pytestmark = pytest.mark.neo4j


def test_routing_driver_and_gds_member_give_the_conformance_scores(neo4j_config) -> None:
    routed = neo4j_config.model_copy(
        update={
            "uri": neo4j_config.uri.replace("bolt://", "neo4j://", 1),
            "gds_uri": neo4j_config.uri,
        }
    )
    store = Neo4jStore(routed, fresh_collection())
    try:
        assert store.gds_driver is not store.driver
        conformance.test_token_ppr_matches_hand_solution(store)
        published = store.get_meta("gds_projection_tokens")
        assert published and published in store.gds._catalog()
        store.clear()
        conformance.test_chunk_ppr_on_candidate_subgraph(store)
    finally:
        store.clear()
        store.close()


def test_gds_uri_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_GDS_URI", "bolt://gds-secondary:7687")
    assert Settings().neo4j.gds_uri == "bolt://gds-secondary:7687"
    monkeypatch.delenv("NEO4J_GDS_URI")
    assert Settings().neo4j.gds_uri == ""
