"""One conformance suite, run against both graph backends (embedded and the real Neo4j)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graph.config import AlgorithmConfig
from graph.types import (
    ChunkEdge,
    ChunkRecord,
    CommunityRecord,
    DocumentRecord,
    EntityMention,
    GraphDelta,
)
from ingest.token_graph import cooccurrence_delta

WINDOW = 4
EXACT = AlgorithmConfig(ppr_max_iterations=500, ppr_tolerance=1e-12, token_min_weight=1)
# Where Neo4j runs token PPR (the embedded backend always runs it in process): every token
# PPR test runs both ways.
PPR_ROUTES = ("gds", "local")


def chunk(
    doc: str, ordinal: int, tokens: str, *, entities: tuple[EntityMention, ...] = ()
) -> ChunkRecord:
    toks = tuple(tokens.split())
    emb = np.zeros(4, dtype=np.float32)
    emb[ordinal % 4] = 1.0
    return ChunkRecord(
        id=f"{doc}#{ordinal}",
        doc_id=doc,
        ordinal=ordinal,
        title=doc.upper(),
        text=" ".join(toks),
        section_path=("Intro",),
        n_tokens=len(toks),
        tokens=toks,
        embedding=emb,
        entities=entities,
        links=("other",),
        questions=(f"what is {doc}",),
    )


def add(store, docs: dict[str, list[ChunkRecord]], remove: list[str] = ()) -> int:
    removed = store.chunk_tokens(remove) if remove else {}
    return store.apply(
        GraphDelta(
            remove_doc_ids=list(remove),
            add=[
                (DocumentRecord(d, f"/src/{d}.txt", d.upper(), f"h-{d}-{len(cs)}", 1.0), cs)
                for d, cs in docs.items()
            ],
            cooccurrence=cooccurrence_delta(
                (c.tokens for cs in docs.values() for c in cs), removed.values(), WINDOW
            ),
        )
    )


ANN = EntityMention("Ann Smith", "PERSON")
PARIS = EntityMention("Paris", "GPE", 2)
CORPUS = {
    "a": [chunk("a", 0, "hub leafa hub", entities=(ANN,)), chunk("a", 1, "hub leafb")],
    "b": [chunk("b", 0, "hub leafc", entities=(ANN, PARIS))],
}


def test_empty_store_counts_zero(store) -> None:
    st = store.status()
    assert (st.documents, st.chunks, st.tokens, st.communities) == (0, 0, 0, 0)
    assert store.chunk_count() == 0
    assert all(n == 0 for n in st.edges.values())
    assert store.documents() == {}
    assert store.get_chunks(["nope"]) == []


def test_write_and_read_back(store) -> None:
    v1 = add(store, CORPUS)
    assert v1 >= 1 and store.graph_version() == v1
    docs = store.documents()
    assert set(docs) == {"a", "b"} and docs["a"].source == "/src/a.txt"
    assert store.chunk_tokens(["a"]) == {"a#0": ("hub", "leafa", "hub"), "a#1": ("hub", "leafb")}
    snap = store.snapshot()
    assert snap.tokens == {"hub": 3, "leafa": 1, "leafb": 1, "leafc": 1}
    assert snap.has_token[("a#0", "hub")] == 2
    # "hub leafa hub": (hub,leafa) at distance 1 twice; (hub,hub) is not a pair.
    assert snap.cooccurs == {("hub", "leafa"): 2, ("hub", "leafb"): 1, ("hub", "leafc"): 1}
    assert snap.entities == {"PERSON:ann smith", "GPE:paris"}
    assert snap.mentions[("b#0", "GPE:paris")] == 2
    got = store.get_chunks(["b#0", "missing", "a#1"])
    assert [c.id for c in got] == ["b#0", "a#1"]
    assert got[1].text == "hub leafb" and got[1].section_path == ("Intro",)
    assert got[0].source == "/src/b.txt"
    st = store.status()
    assert (st.documents, st.chunks, st.tokens) == (2, 3, 4)
    assert store.chunk_count() == 3
    assert st.edges["CO_OCCURS"] == 3 and st.edges["MENTIONS"] == 3
    vecs = store.chunk_vectors("embedding", ["a#1"])
    assert np.allclose(vecs["a#1"], [0, 1, 0, 0])
    corpus = {c.id: c for c in store.corpus()}
    assert corpus["b#0"].entities and {e.key for e in corpus["b#0"].entities} == {
        "PERSON:ann smith",
        "GPE:paris",
    }
    assert corpus["a#0"].links == ("other",) and corpus["a#0"].questions == ("what is a",)


def test_document_chunks_are_the_corpus_rows_of_those_documents(store) -> None:
    add(store, {**CORPUS, "c": [chunk("c", 0, "lone words")]})
    corpus = {c.id: c for c in store.corpus()}
    got = store.document_chunks(["b", "a", "missing", "a"])
    assert [c.id for c in got] == ["a#0", "a#1", "b#0"]  # (doc_id, ordinal) order
    for c in got:
        full = corpus[c.id]
        assert (c.doc_id, c.ordinal, c.title, c.text, c.section_path, c.n_tokens) == (
            full.doc_id,
            full.ordinal,
            full.title,
            full.text,
            full.section_path,
            full.n_tokens,
        )
        assert (c.links, c.questions, c.entities) == (full.links, full.questions, full.entities)
        assert np.array_equal(c.embedding, full.embedding)
    assert got[0].tokens == ("hub", "leafa", "hub") and got[2].tokens == ("hub", "leafc")
    assert store.document_chunks([]) == []


def test_chunk_records_and_entity_holders(store) -> None:
    """What an incremental edge update reads of chosen chunks: their complete records (as
    document_chunks gives them) and, by entity key, the chunks mentioning each entity."""
    add(store, {**CORPUS, "c": [chunk("c", 0, "lone words")]})
    by_doc = {c.id: c for c in store.document_chunks(["a", "b", "c"])}
    got = store.chunk_records(["b#0", "a#1", "nope", "b#0"])
    assert [c.id for c in got] == ["a#1", "b#0"]  # (doc_id, ordinal) order, unknown left out
    for c in got:
        want = by_doc[c.id]
        assert (c.text, c.links, c.questions, c.entities, c.tokens) == (
            want.text,
            want.links,
            want.questions,
            want.entities,
            want.tokens,
        )
        assert np.array_equal(c.embedding, want.embedding)
    assert store.chunk_records([]) == []
    holders = store.entity_holders([ANN.key, PARIS.key, "PERSON:nobody"])
    assert holders == {ANN.key: ["a#0", "b#0"], PARIS.key: ["b#0"]}
    add(store, {}, remove=["b"])
    assert store.entity_holders([ANN.key, PARIS.key]) == {ANN.key: ["a#0"]}


def test_index_inputs_are_the_corpus_compactly(store) -> None:
    """What a full build of the search files reads: every chunk's id (sorted), document and
    questions, and the embeddings of those that have one, as one matrix."""
    no_vector = dataclasses.replace(chunk("c", 0, "lone words"), embedding=None)
    add(store, {**CORPUS, "c": [no_vector]})
    got = store.index_inputs()
    corpus = sorted(store.corpus(), key=lambda c: c.id)
    assert got.chunk_ids == [c.id for c in corpus] == ["a#0", "a#1", "b#0", "c#0"]
    assert got.chunk_docs == [c.doc_id for c in corpus]
    assert got.questions == [c.questions for c in corpus]
    assert got.vector_ids == ["a#0", "a#1", "b#0"]
    want = np.stack([c.embedding for c in corpus if c.embedding is not None])
    assert got.vectors.dtype == np.float32 and np.array_equal(got.vectors, want)


def test_delete_is_exact(store) -> None:
    add(store, CORPUS)
    add(store, {}, remove=["b"])
    snap = store.snapshot()
    assert set(snap.documents) == {"a"}
    assert "leafc" not in snap.tokens and snap.tokens["hub"] == 2
    assert snap.cooccurs == {("hub", "leafa"): 2, ("hub", "leafb"): 1}
    assert snap.entities == {"PERSON:ann smith"}  # Paris had no other mention
    # Re-adding b restores exactly the first state.
    add(store, {"b": CORPUS["b"]})
    full = store.snapshot()
    assert full.cooccurs == {("hub", "leafa"): 2, ("hub", "leafb"): 1, ("hub", "leafc"): 1}
    assert full.tokens["hub"] == 3 and full.entities == {"PERSON:ann smith", "GPE:paris"}


def test_chunk_edges_and_neighbourhood(store) -> None:
    add(store, CORPUS)
    edges = [
        ChunkEdge("NEXT", "a#0", "a#1", 1.0),
        ChunkEdge("SEMANTIC", "a#0", "b#0", 0.7),
        ChunkEdge("RELATED", "a#0", "a#1", 0.084),
        ChunkEdge("RELATED", "a#0", "b#0", 0.21),
    ]
    store.replace_chunk_edges(edges)
    st = store.status()
    assert st.edges["NEXT"] == 1 and st.edges["SEMANTIC"] == 1 and st.edges["RELATED"] == 2
    around_b = store.neighbours(["b#0"])
    assert {(e.kind, e.src, e.dst) for e in around_b} == {
        ("SEMANTIC", "a#0", "b#0"),
        ("RELATED", "a#0", "b#0"),
    }
    only_next = store.neighbours(["a#1"], kinds=["NEXT"])
    assert only_next == [ChunkEdge("NEXT", "a#0", "a#1", 1.0)]
    store.replace_chunk_edges(edges[:1])
    assert store.status().edges["SEMANTIC"] == 0
    # Removing a document removes its chunks' edges.
    add(store, {}, remove=["a"])
    assert store.neighbours(["a#0", "a#1"]) == []


def test_communities_and_vectors(store) -> None:
    add(store, CORPUS)
    store.write_communities(
        {"a#0": 0, "a#1": 0, "b#0": 1},
        [CommunityRecord(0, 0, 2, ("hub", "leafa")), CommunityRecord(1, 0, 1, ("leafc",))],
    )
    assert [c.id for c in store.communities()] == [0, 1]
    assert store.communities()[0].top_tokens == ("hub", "leafa")
    assert store.get_chunks(["b#0"])[0].community == 1
    assert store.status().communities == 2
    store.write_vectors("fastrp", {"a#0": np.array([0.5, -0.5], dtype=np.float32)})
    assert np.allclose(store.chunk_vectors("fastrp")["a#0"], [0.5, -0.5])
    with pytest.raises(ValueError):
        store.write_vectors("text", {})


def test_meta_round_trip(store) -> None:
    assert store.get_meta("x") is None
    store.set_meta("x", "1")
    store.set_meta("x", "2")
    assert store.get_meta("x") == "2"


def _closed_form_ppr(adj: np.ndarray, seeds: list[int], damping: float) -> np.ndarray:
    """p = (1-d)·s + d·Pᵀp with P the weight-normalised transition matrix, solved exactly."""
    n = adj.shape[0]
    p_t = (adj / adj.sum(axis=1, keepdims=True)).T
    s = np.zeros(n)
    s[seeds] = 1.0 / len(seeds)
    p = np.linalg.solve(np.eye(n) - damping * p_t, (1 - damping) * s)
    return p / p.sum()


def test_token_ppr_matches_hand_solution(store) -> None:
    add(store, CORPUS)
    # Star: hub–leafa weight 2, hub–leafb 1, hub–leafc 1.
    names = ["hub", "leafa", "leafb", "leafc"]
    adj = np.array([[0, 2, 1, 1], [2, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], dtype=float)
    expected = _closed_form_ppr(adj, [1], EXACT.ppr_damping)
    for route in PPR_ROUTES:
        cfg = EXACT.model_copy(update={"token_ppr": route})
        got = store.token_ppr({"leafa": 1.0}, cfg, top_k=10)
        total = sum(got.values())
        assert set(got) == set(names), route
        for i, name in enumerate(names):
            assert got[name] / total == pytest.approx(expected[i], abs=1e-4), route
        assert list(got)[:2] == ["hub", "leafa"] or list(got)[:2] == ["leafa", "hub"]
        assert store.token_ppr({"unknown": 1.0}, cfg, top_k=5) == {}
        top1 = store.token_ppr({"leafa": 1.0}, cfg, top_k=1)
        assert len(top1) == 1


def test_token_ppr_runs_on_edges_of_min_weight(store) -> None:
    add(store, CORPUS)
    for route in PPR_ROUTES:
        exact = EXACT.model_copy(update={"token_ppr": route})
        pruned = exact.model_copy(update={"token_min_weight": 2})
        # Only hub–leafa (weight 2) survives: leafb and leafc get no mass from leafa.
        got = store.token_ppr({"leafa": 1.0}, pruned, top_k=10)
        assert set(got) == {"hub", "leafa"}, route
        full = store.token_ppr({"leafa": 1.0}, exact, top_k=10)
        assert set(full) == {"hub", "leafa", "leafb", "leafc"}, route


def test_token_ppr_tolerance_is_bounded_on_large_graphs(store) -> None:
    """Above `token_ppr_bounded_above` relationships every route runs the token PageRank
    with `token_ppr_bounded_tolerance` under the `delta` rule, GDS's own (here every graph
    is large, and the tolerance high enough to cut the star's propagation short)."""
    from graph.algorithms.ppr import personalized_pagerank

    add(store, CORPUS)
    adj = np.array([[0, 2, 1, 1], [2, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], dtype=float)
    names = ["hub", "leafa", "leafb", "leafc"]
    for route in PPR_ROUTES:
        base = EXACT.model_copy(
            update={
                "token_ppr": route,
                "token_ppr_bounded_tolerance": 0.05,
                "token_ppr_bounded_rule": "delta",
            }
        )
        exact = store.token_ppr({"leafa": 1.0}, base, top_k=10)
        bounded_cfg = base.model_copy(update={"token_ppr_bounded_above": 0})
        bounded = store.token_ppr({"leafa": 1.0}, bounded_cfg, top_k=10)
        cut = base.model_copy(update={"ppr_tolerance": 0.05})
        want = personalized_pagerank(adj, {1: 1.0}, cut)
        assert bounded == pytest.approx({n: want[i] for i, n in enumerate(names) if want[i] > 0})
        assert bounded != pytest.approx(exact), route  # the tolerance took effect


def test_token_ppr_per_degree_rule_runs_in_process_and_gds_keeps_delta(store) -> None:
    """The default bounded rule, `per_degree`, runs wherever the PageRank runs in process
    (the embedded backend, Neo4j's local route); the GDS route, which has only its own
    rule, runs `delta` at `token_ppr_bounded_tolerance` instead."""
    from graph.algorithms.ppr import personalized_pagerank

    add(store, CORPUS)
    adj = np.array([[0, 2, 1, 1], [2, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], dtype=float)
    names = ["hub", "leafa", "leafb", "leafc"]
    bounded = EXACT.model_copy(
        update={
            "token_ppr_bounded_above": 0,
            "token_ppr_bounded_tolerance": 0.05,
            "token_ppr_per_degree_tolerance": 0.02,
        }
    )
    rules = {
        "per_degree": bounded.model_copy(
            update={"ppr_tolerance": 0.02, "ppr_send_rule": "per_degree"}
        ),
        "delta": bounded.model_copy(update={"ppr_tolerance": 0.05}),
    }
    want = {
        rule: {
            n: s
            for n, s in zip(names, personalized_pagerank(adj, {1: 1.0}, c), strict=True)
            if s > 0
        }
        for rule, c in rules.items()
    }
    assert want["per_degree"] != pytest.approx(want["delta"])  # the rules tell apart
    routes = PPR_ROUTES if store.backend == "neo4j" else ("local",)
    for route in routes:
        got = store.token_ppr({"leafa": 1.0}, bounded.model_copy(update={"token_ppr": route}), 10)
        rule = "delta" if route == "gds" else "per_degree"
        assert got == pytest.approx(want[rule]), route


def test_token_neighbourhood_follows_new_documents(store) -> None:
    add(store, CORPUS)
    pruned = AlgorithmConfig(token_min_weight=2)
    store.token_ppr({"leafa": 1.0}, pruned, top_k=10)  # caches a pruned graph (embedded)
    assert set(store.token_neighbourhood(["hub"], 10)) == {"leafa", "leafb", "leafc"}
    add(store, {"c": [chunk("c", 0, "hub newleaf")]})
    got = store.token_neighbourhood(["hub"], 10)
    assert set(got) == {"leafa", "leafb", "leafc", "newleaf"}
    assert got["leafa"] == 2.0 and got["newleaf"] == 1.0


def test_chunk_ppr_on_candidate_subgraph(store) -> None:
    add(store, CORPUS)
    store.replace_chunk_edges(
        [ChunkEdge("RELATED", "a#0", "a#1", 0.5), ChunkEdge("RELATED", "a#1", "b#0", 0.5)]
    )
    got = store.chunk_ppr({"a#0": 1.0}, ["a#0", "a#1"], EXACT)
    adj = np.array([[0, 0.5], [0.5, 0]])
    expected = _closed_form_ppr(adj, [0], EXACT.ppr_damping)
    total = sum(got.values())
    assert set(got) == {"a#0", "a#1"}  # b#0 is outside the candidate set
    assert got["a#0"] / total == pytest.approx(expected[0], abs=1e-4)
    assert store.chunk_ppr({"zzz": 1.0}, ["a#0"], EXACT) == {}


def test_chunk_edge_change_is_one_exact_transaction(store) -> None:
    from graph.types import ChunkEdgeChange

    add(store, CORPUS)
    v0 = store.graph_version()
    v1 = store.apply_chunk_edge_change(
        ChunkEdgeChange(
            replace_all=True,
            write=[
                ChunkEdge("NEXT", "a#0", "a#1", 1.0),
                ChunkEdge("SEMANTIC", "a#0", "b#0", 0.5),
            ],
            states={"a#0": '{"SEMANTIC":null}', "b#0": "{}"},
            meta={"edge_test": "built"},
        )
    )
    assert v1 > v0 and store.graph_version() == v1
    # Rewriting a stored key replaces its weight (one edge, not two); deleting an edge that
    # is not stored is no error; states and meta change in the same call.
    store.apply_chunk_edge_change(
        ChunkEdgeChange(
            delete=[("NEXT", "a#0", "a#1"), ("CITES", "b#0", "a#0")],
            write=[ChunkEdge("SEMANTIC", "a#0", "b#0", 0.25)],
            states={"a#0": '{"SEMANTIC":[0.25,"b#0"]}'},
            drop_states=["b#0"],
            meta={"edge_test": "updated"},
        )
    )
    assert store.neighbours(["a#0"]) == [ChunkEdge("SEMANTIC", "a#0", "b#0", 0.25)]
    assert store.status().edges["SEMANTIC"] == 1 and store.status().edges["NEXT"] == 0
    states = store.chunk_edge_states(["a#0", "b#0", "nope"])
    assert states["a#0"] == '{"SEMANTIC":[0.25,"b#0"]}'
    assert store.get_meta("edge_test") == "updated"
    store.apply_chunk_edge_change(ChunkEdgeChange(replace_all=True))
    assert store.neighbours(["a#0", "b#0"]) == [] and store.chunk_edge_states(["a#0"]) == {}


def test_large_full_edge_rebuild_is_written_in_parts(store, monkeypatch) -> None:
    """On Neo4j a full rebuild above FULL_EDGE_REBUILD_ROWS edges is written in several
    transactions (one would pass the server's transaction memory limit at 50k chunks); the
    result is the same as one transaction's: old edges and states gone, new ones, meta and a
    new graph version written."""
    from graph.types import ChunkEdgeChange

    if store.backend == "neo4j":
        import graph.neo4j.store_writes as neo4j_writes

        monkeypatch.setattr(neo4j_writes, "FULL_EDGE_REBUILD_ROWS", 1)
    add(store, CORPUS)
    store.apply_chunk_edge_change(
        ChunkEdgeChange(
            replace_all=True,
            write=[ChunkEdge("CITES", "b#0", "a#0", 1.0)],
            states={"b#0": "old"},
            meta={"edge_test": "first"},
        )
    )
    v0 = store.graph_version()
    edges = [ChunkEdge("NEXT", "a#0", "a#1", 1.0), ChunkEdge("SEMANTIC", "a#0", "b#0", 0.5)]
    v1 = store.apply_chunk_edge_change(
        ChunkEdgeChange(
            replace_all=True, write=edges, states={"a#0": "new"}, meta={"edge_test": "second"}
        )
    )
    assert v1 > v0 and store.graph_version() == v1
    got = store.neighbours(["a#0"])
    assert sorted(got, key=lambda e: e.kind) == sorted(edges, key=lambda e: e.kind)
    assert store.status().edges["CITES"] == 0  # the old edge went
    assert store.chunk_edge_states(["a#0", "b#0"]) == {"a#0": "new"}
    assert store.get_meta("edge_test") == "second"


def test_chunk_records_and_meta_written_with_a_delta(store) -> None:
    add(store, CORPUS)
    records = store.document_chunks(["a"])
    assert [c.id for c in records] == ["a#0", "a#1"]
    assert records[0].entities == (ANN,) and records[0].questions == ("what is a",)
    assert np.allclose(records[1].embedding, [0, 1, 0, 0])
    store.apply(GraphDelta(remove_doc_ids=["b"], meta={"journal_test": "b gone"}))
    assert store.get_meta("journal_test") == "b gone" and "b" not in store.documents()


def test_patch_analytics_touches_only_the_given_chunks(store) -> None:
    add(store, CORPUS)
    store.write_communities({"a#0": 0, "a#1": 0}, [CommunityRecord(0, 0, 2, ("hub",))])
    store.write_vectors("spectral", {"a#0": np.ones(2, dtype=np.float32)})
    store.patch_chunk_analytics(
        {"b#0": 0}, {"spectral": {"b#0": np.full(2, 0.5, dtype=np.float32)}, "fastrp": {}}
    )
    views = {c.id: c.community for c in store.get_chunks(["a#0", "a#1", "b#0"])}
    assert views == {"a#0": 0, "a#1": 0, "b#0": 0}
    spectral = store.chunk_vectors("spectral")
    assert set(spectral) == {"a#0", "b#0"} and np.allclose(spectral["a#0"], 1.0)
    assert np.allclose(spectral["b#0"], 0.5)


@pytest.mark.neo4j
def test_neo4j_collections_are_separate_graphs(neo4j_config) -> None:
    """Two collections in one database: own tokens, own PageRank, own projections; clearing
    one leaves the other exactly as it was."""
    from graph.neo4j.store import Neo4jStore
    from tests.conftest import fresh_collection

    first, second = (Neo4jStore(neo4j_config, fresh_collection()) for _ in range(2))
    try:
        texts = {first: "hub leafa hub leafb", second: "hub leafz hub leafy leafz"}
        for store, text in texts.items():
            doc = f"{store.collection}:a"
            add(store, {doc: [chunk(doc, 0, text), chunk(doc, 1, "hub " + text.split()[1])]})
            store.run_analytics(EXACT)
        kept = first.snapshot()
        assert set(kept.tokens) == {"hub", "leafa", "leafb"}
        assert set(second.snapshot().tokens) == {"hub", "leafy", "leafz"}
        assert set(first.token_ppr({"hub": 1.0}, EXACT, 10)) <= {"hub", "leafa", "leafb"}
        assert set(second.token_ppr({"hub": 1.0}, EXACT, 10)) <= {"hub", "leafy", "leafz"}
        names = [r["name"] for r in first.read("gds_graph_names")]
        for store in (first, second):
            mine = [n for n in names if f".{store.collection}.v" in n]
            assert any(n.startswith("neorag_tokens.") for n in mine), names
            assert any(n.startswith("neorag_chunks.") for n in mine), names
        second.clear()
        assert first.snapshot() == kept
        assert second.status().documents == 0 and second.snapshot().tokens == {}
        remaining = [r["name"] for r in first.read("gds_graph_names")]
        assert not [n for n in remaining if f".{second.collection}.v" in n]
    finally:
        for store in (first, second):
            store.clear()
            store.close()


def test_citations_and_mentions_read_in_one_call(store) -> None:
    add(store, CORPUS)
    store.replace_chunk_edges(
        [
            ChunkEdge("CITES", "a#0", "b#0", 0.7),
            ChunkEdge("CITES", "b#0", "a#1", 0.4),
            ChunkEdge("NEXT", "a#0", "a#1", 1.0),
        ]
    )
    for ids in (["a#0"], ["a#0", "b#0"], ["b#0", "a#1", "a#0"], ["nope"]):
        edges, mentions = store.citations_and_mentions(ids)
        assert set(edges) == set(store.neighbours(ids, kinds=["CITES"])), ids
        assert len(edges) == len(set(edges)), ids
        assert mentions == store.chunk_entities(ids), ids
    edges, mentions = store.citations_and_mentions(["a#0", "b#0"])
    assert sorted((e.src, e.dst) for e in edges) == [("a#0", "b#0"), ("b#0", "a#1")]
    assert mentions["b#0"] == [ANN, PARIS] or mentions["b#0"] == [PARIS, ANN]
