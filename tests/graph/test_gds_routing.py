"""GDS work goes to one member: through a routing (`neo4j://`) driver, and through a
separate driver for a dedicated GDS member (`NEO4J_GDS_URI`), the projections and the
PageRank scores are those of the direct connection. One machine has one member, so this
checks the wiring a cluster relies on: catalog, projection and algorithm calls share the
GDS driver and its write routing, data reads use the routed one."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import RoutingControl

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


def test_questions_send_data_reads_as_read_transactions(
    neo4j_store: Neo4jStore, tmp_path: Path
) -> None:
    """Every mode answering a question sends its data reads routed as reads (so a cluster
    serves them from a secondary or read replica) and opens no write transaction; only the
    GDS member's driver, which holds the projections, is routed as a writer."""
    from app.engine import Engine
    from app.ingest_service import ingest_once
    from app.retrieval import mode_names
    from tests.app.test_engine_staging import HARBOUR, QUESTION, RIVERS, write_corpus

    settings = Settings(
        backend="neo4j", data_dir=tmp_path / "data", collection=neo4j_store.collection
    )
    ingest_once(settings, write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR}))
    gds_member = settings.neo4j.model_copy(update={"gds_uri": settings.neo4j.uri})
    engine = Engine(settings.model_copy(update={"neo4j": gds_member}))
    assert engine.store.gds_driver is not engine.store.driver
    routes: list[tuple[object, str]] = []
    writes: list[str] = []
    driver = engine.store.driver
    real_query, real_session = driver.execute_query, driver.session

    def recording_query(*args, **kwargs):  # type: ignore[no-untyped-def]
        routes.append((kwargs.get("routing_", RoutingControl.WRITE), str(args[0])[:300]))
        return real_query(*args, **kwargs)

    def recording_session(*args, **kwargs):  # type: ignore[no-untyped-def]
        session = real_session(*args, **kwargs)
        real_write = session.execute_write
        session.execute_write = lambda *a, **k: writes.append("tx") or real_write(*a, **k)
        return session

    try:
        driver.execute_query = recording_query
        driver.session = recording_session
        for mode in mode_names():
            engine.retriever(mode).retrieve(QUESTION)
        engine.settle(60)
    finally:
        driver.execute_query, driver.session = real_query, real_session
        engine.close()
    assert routes, "no query reached the routed driver"
    assert [q for r, q in routes if r != RoutingControl.READ] == [] and not writes


def test_a_new_version_drops_the_older_projections(neo4j_store: Neo4jStore) -> None:
    """After a change, the refreshed projection of each kind is published and the older
    version of the same collection leaves the catalog (one projection per kind and
    collection stays in the server's memory)."""
    conformance.add(neo4j_store, conformance.CORPUS)
    gds = neo4j_store.gds
    first = {kind: gds.projection(kind, refresh=True) for kind in ("tokens", "chunks")}
    conformance.add(neo4j_store, {"c": [conformance.chunk("c", 0, "hub leafd")]})
    second = {kind: gds.projection(kind, refresh=True) for kind in ("tokens", "chunks")}
    catalog = gds._catalog()
    for kind in ("tokens", "chunks"):
        assert second[kind] != first[kind], kind
        assert second[kind] in catalog and first[kind] not in catalog, kind


def test_a_patch_projects_the_token_graph_when_queries_rank_in_gds(
    neo4j_store: Neo4jStore,
) -> None:
    """A patch publishes the token graph without projecting it while queries rank in
    process (they read the stored graph); when they rank in GDS (database serving) the
    patch projects it, so no query waits for the projection."""
    from graph.base import AnalyticsReport

    conformance.add(neo4j_store, conformance.CORPUS)
    gds = neo4j_store.gds
    for token_ppr, projected in (("auto", False), ("gds", True)):
        conformance.add(neo4j_store, {token_ppr: [conformance.chunk(token_ppr, 0, "hub leafd")]})
        cfg = Settings().algorithms.model_copy(update={"token_ppr": token_ppr})
        neo4j_store.analytics_hooks().prepare(cfg, AnalyticsReport(), full=False)
        published = gds.published_name("tokens", min_weight=cfg.token_min_weight)
        assert published is not None
        assert (published in gds._catalog()) is projected, token_ppr
