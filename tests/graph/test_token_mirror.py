"""The Neo4j backend's in-process copy of the token projection (graph/neo4j/token_mirror.py):
the same PageRank as GDS, the published version only, and GDS above the size limit."""

from __future__ import annotations

import pytest

from tests.graph.test_conformance import CORPUS, EXACT, add, chunk

# The conformance corpus's document ids ('a', 'b') are unique in the database, and
# test_conformance writes them from another worker: run alone.
pytestmark = pytest.mark.exclusive

AUTO = EXACT.model_copy(update={"token_ppr": "auto"})
GDS = EXACT.model_copy(update={"token_ppr": "gds"})
SEEDS = ({"leafa": 1.0}, {"hub": 1.0}, {"leafb": 1.0, "leafc": 1.0})


def _same(a: dict[str, float], b: dict[str, float]) -> None:
    assert set(a) == set(b)
    for token, score in a.items():
        assert score == pytest.approx(b[token], rel=1e-9, abs=1e-12), token


def _publish(store) -> str:
    return store.gds.projection("tokens", refresh=True, min_weight=EXACT.token_min_weight)


def test_auto_copies_the_published_projection_and_agrees_with_gds(neo4j_store) -> None:
    add(neo4j_store, CORPUS)
    name = _publish(neo4j_store)
    mirror = neo4j_store.token_mirror
    first = neo4j_store.token_ppr(SEEDS[0], AUTO, top_k=10)  # GDS while the copy loads
    mirror.wait()
    assert mirror.loaded == name and mirror.loads == 1
    _same(first, neo4j_store.token_ppr(SEEDS[0], GDS, top_k=10))
    for seeds in SEEDS:
        _same(
            neo4j_store.token_ppr(seeds, AUTO, top_k=10),
            neo4j_store.gds.token_ppr(seeds, EXACT, 10),
        )
    assert mirror.loads == 1  # loaded once per published version


def test_a_new_published_version_is_copied_again(neo4j_store) -> None:
    add(neo4j_store, CORPUS)
    _publish(neo4j_store)
    local = EXACT.model_copy(update={"token_ppr": "local"})
    assert "newleaf" not in neo4j_store.token_ppr({"hub": 1.0}, local, top_k=10)
    add(neo4j_store, {"c": [chunk("c", 0, "hub newleaf")]})
    # not published yet: queries stay on the published graph, whichever runs them
    assert "newleaf" not in neo4j_store.token_ppr({"hub": 1.0}, local, top_k=10)
    name = _publish(neo4j_store)
    got = neo4j_store.token_ppr({"hub": 1.0}, local, top_k=10)
    assert neo4j_store.token_mirror.loaded == name and "newleaf" in got
    _same(got, neo4j_store.gds.token_ppr({"hub": 1.0}, EXACT, 10))


def test_above_the_size_limit_gds_runs_it(neo4j_store) -> None:
    add(neo4j_store, CORPUS)
    _publish(neo4j_store)
    small = AUTO.model_copy(update={"local_ppr_max_relationships": 3})  # the star has 6
    got = neo4j_store.token_ppr(SEEDS[0], small, top_k=10)
    neo4j_store.token_mirror.wait()
    assert neo4j_store.token_mirror.loaded is None
    assert not neo4j_store.token_mirror.load(neo4j_store.gds.projection("tokens"), small)
    _same(got, neo4j_store.gds.token_ppr(SEEDS[0], EXACT, 10))


def test_a_kept_copy_is_mapped_by_the_next_process_without_a_read(
    neo4j_config, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The copy is kept on local disk; a store opened later (a restarted server) maps it
    instead of reading the projection's relationships again, and answers alike. A
    collection made again (its new store id) does not take the old copy."""
    from graph.neo4j.store import Neo4jStore
    from graph.neo4j.token_mirror import TokenMirror
    from tests.conftest import fresh_collection

    local = EXACT.model_copy(update={"token_ppr": "local"})
    first = Neo4jStore(neo4j_config, fresh_collection(), local_dir=tmp_path)
    try:
        add(first, CORPUS)
        name = _publish(first)
        expected = [first.token_ppr(s, local, top_k=10) for s in SEEDS]
        assert (tmp_path / "token-graph" / "meta.json").is_file()
        again = Neo4jStore(neo4j_config, first.collection, local_dir=tmp_path)
        try:
            monkeypatch.setattr(
                TokenMirror, "_read", lambda *a: pytest.fail("read the server again")
            )
            got = [again.token_ppr(s, local, top_k=10) for s in SEEDS]
            assert again.token_mirror.loaded == name
            assert not again.token_mirror._ready[1].operator.push.data.flags.owndata
            for a, b in zip(got, expected, strict=True):
                _same(a, b)
        finally:
            again.close()
        monkeypatch.undo()
        first.clear()
        add(first, CORPUS)  # the same content and version numbers, a new store id
        assert _publish(first) == name
        reads: list[int] = []
        real = TokenMirror._read

        def counted(self, *args):  # type: ignore[no-untyped-def]
            reads.append(1)
            return real(self, *args)

        monkeypatch.setattr(TokenMirror, "_read", counted)
        fresh = Neo4jStore(neo4j_config, first.collection, local_dir=tmp_path)
        try:
            fresh.token_ppr(SEEDS[0], local, top_k=10)
            assert reads == [1]
        finally:
            fresh.close()
    finally:
        first.clear()
        first.close()


def test_a_patch_publishes_the_token_graph_without_projecting_it(neo4j_store) -> None:
    """After a small change the token graph is published but not projected: queries run on
    the in-process copy read from the stored graph, and GDS projects it only when an
    algorithm there first needs it (the same scores)."""
    add(neo4j_store, CORPUS)
    first = _publish(neo4j_store)
    add(neo4j_store, {"c": [chunk("c", 0, "hub newleaf")]})
    gds = neo4j_store.gds
    name = gds.publish("tokens", min_weight=EXACT.token_min_weight)
    assert name != first and name not in gds._catalog()
    local = EXACT.model_copy(update={"token_ppr": "local"})
    got = neo4j_store.token_ppr({"hub": 1.0}, local, top_k=10)
    assert "newleaf" in got and neo4j_store.token_mirror.loaded == name
    assert name not in gds._catalog(), "the in-process copy needed no projection"
    _same(got, gds.token_ppr({"hub": 1.0}, EXACT, 10))
    assert name in gds._catalog()


def test_a_change_is_followed_from_the_kept_copy_without_reading_the_graph(
    neo4j_config, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """After a change the copy is carried forward by what the change recorded (the pairs it
    touched and their new weights): no read of every pair, and the same PageRank as a full
    read of the new version and as GDS. A change that was not recorded (pruned, or too
    large) makes the copy read it all again."""
    from graph.neo4j import store_writes
    from graph.neo4j.store import Neo4jStore
    from graph.neo4j.token_mirror import TokenMirror
    from tests.conftest import fresh_collection

    local = EXACT.model_copy(update={"token_ppr": "local"})
    store = Neo4jStore(neo4j_config, fresh_collection(), local_dir=tmp_path)
    try:
        add(store, CORPUS)
        _publish(store)
        store.token_ppr(SEEDS[0], local, top_k=10)
        assert store.token_mirror.followed == 0
        # one document rewritten (its pairs change, one vanishes), one added with new tokens
        add(store, {"a": [chunk("a", 0, "hub leafb")], "c": [chunk("c", 0, "hub newleaf")]}, ["a"])
        add(store, {"d": [chunk("d", 0, "newleaf hub lonely")]})
        name = _publish(store)
        monkeypatch.setattr(TokenMirror, "_read", lambda *a: pytest.fail("read every pair"))
        seeds = [*SEEDS, {"newleaf": 1.0}, {"lonely": 1.0}]
        got = [store.token_ppr(s, local, top_k=10) for s in seeds]
        assert store.token_mirror.loaded == name and store.token_mirror.followed == 1
        monkeypatch.undo()
        full = TokenMirror(store, None)
        assert full.load(name, local) and full.followed == 0
        for s, g in zip(seeds, got, strict=True):
            _same(g, full.top(s, local, 10) or {})
            _same(g, store.gds.token_ppr(s, EXACT, 10))

        monkeypatch.setattr(store_writes, "RECORDED_PAIRS_MAX", 0)  # the next change: unrecorded
        add(store, {"e": [chunk("e", 0, "hub leafc")]})
        name = _publish(store)
        assert "leafc" in store.token_ppr({"hub": 1.0}, local, top_k=10)
        assert store.token_mirror.loaded == name and store.token_mirror.followed == 1
    finally:
        store.clear()
        store.close()


def test_a_warm_up_loads_the_copy_without_projecting(neo4j_store) -> None:
    """Warming TIGRAG after a change loads the in-process copy of the newly published token
    graph; it does not make GDS project the whole graph to answer its one question. With
    token_ppr=gds the warm-up is what projects it."""
    add(neo4j_store, CORPUS)
    _publish(neo4j_store)
    add(neo4j_store, {"c": [chunk("c", 0, "hub newleaf")]})
    gds = neo4j_store.gds
    name = gds.publish("tokens", min_weight=EXACT.token_min_weight)
    neo4j_store.warm_token_ppr(AUTO, "hub")
    assert neo4j_store.token_mirror.loaded == name
    assert name not in gds._catalog()
    neo4j_store.warm_token_ppr(GDS, "hub")
    assert name in gds._catalog()
