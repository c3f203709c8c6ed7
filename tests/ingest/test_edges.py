"""Each chunk-edge kind on a small corpus made to exhibit it, and their fusion."""

from __future__ import annotations

import numpy as np
import pytest

from graph.types import ChunkEdge, ChunkRecord, EntityMention
from ingest.config import EdgeConfig, TokenConfig
from ingest.edges import (
    TitleMatcher,
    build_chunk_edges,
    cites_edges,
    next_edges,
    related_edges,
    same_section_edges,
    semantic_edges,
    shares_entity_edges,
    utility_edges,
)
from ingest.tokens import Analyzer

ANALYZER = Analyzer(TokenConfig())


def rec(
    cid: str,
    doc: str,
    ordinal: int = 0,
    *,
    text: str = "",
    title: str = "",
    section: tuple[str, ...] = (),
    emb: list[float] | None = None,
    entities: tuple[EntityMention, ...] = (),
    links: tuple[str, ...] = (),
    questions: tuple[str, ...] = (),
) -> ChunkRecord:
    return ChunkRecord(
        id=cid,
        doc_id=doc,
        ordinal=ordinal,
        title=title or doc,
        text=text or f"text of {cid}",
        section_path=section,
        embedding=None if emb is None else np.asarray(emb, dtype=np.float32),
        entities=entities,
        links=links,
        questions=questions,
    )


def test_semantic_knn_truncated() -> None:
    chunks = [
        rec("a", "d1", emb=[1, 0, 0]),
        rec("b", "d2", emb=[0.9, 0.1, 0]),
        rec("c", "d3", emb=[0.8, 0.3, 0]),
        rec("z", "d4", emb=[0, 0, 1]),
    ]
    cfg = EdgeConfig(semantic_k=1, semantic_min_cosine=0.5)
    edges = {(e.src, e.dst): e.weight for e in semantic_edges(chunks, cfg)}
    # k=1: a↔b are each other's nearest; c's nearest is b; z has no neighbour above 0.5.
    assert set(edges) == {("a", "b"), ("b", "c")}
    cos_ab = 0.9 / np.linalg.norm([0.9, 0.1, 0])
    assert edges[("a", "b")] == pytest.approx(cos_ab, abs=1e-6)
    assert all(0 <= w <= 1 for w in edges.values())


def test_next_links_consecutive_chunks_of_one_document() -> None:
    chunks = [
        rec("d1#2", "d1", 2),
        rec("d1#0", "d1", 0),
        rec("d1#1", "d1", 1),
        rec("d2#0", "d2", 0),
    ]
    assert next_edges(chunks) == [
        ChunkEdge("NEXT", "d1#0", "d1#1", 1.0),
        ChunkEdge("NEXT", "d1#1", "d1#2", 1.0),
    ]


def test_same_section_full_and_parent_weights() -> None:
    chunks = [
        rec("a", "d1", 0, section=("Guide", "Install")),
        rec("b", "d1", 1, section=("Guide", "Install")),
        rec("c", "d1", 2, section=("Guide", "Usage")),
        rec("x", "d2", 0, section=("Guide", "Install")),  # other document: never
        rec("n", "d1", 3),  # no heading: no section edge
    ]
    edges = {(e.src, e.dst): e.weight for e in same_section_edges(chunks, EdgeConfig())}
    assert edges == {("a", "b"): 1.0, ("a", "c"): 0.5, ("b", "c"): 0.5}


def test_shares_entity_weight_and_frequency_cap() -> None:
    curie = EntityMention("Marie Curie", "PERSON")
    paris = EntityMention("Paris", "GPE")
    common = EntityMention("Europe", "LOC")
    chunks = [
        rec("a", "d1", entities=(curie, common)),
        rec("b", "d2", entities=(curie, paris, common)),
        rec("c", "d3", entities=(paris, common)),
        rec("d", "d4", entities=(common,)),
    ]
    cfg = EdgeConfig(entity_max_chunks=3)  # Europe is in 4 chunks: no signal
    edges = {(e.src, e.dst): e.weight for e in shares_entity_edges(chunks, cfg)}
    assert set(edges) == {("a", "b"), ("b", "c")}
    # a holds only Curie (Europe ignored): shared mass / min(mass) = 1 for a–b.
    assert edges[("a", "b")] == pytest.approx(1.0)
    # Label is ignored: "Paris" as ORG elsewhere still matches by name.
    chunks[2] = rec("c", "d3", entities=(EntityMention("Paris", "ORG"),))
    again = {(e.src, e.dst) for e in shares_entity_edges(chunks, cfg)}
    assert ("b", "c") in again


def test_cites_by_link_and_by_title_mention() -> None:
    chunks = [
        rec(
            "g#0",
            "guide.md",
            0,
            title="Guide",
            text="See the install notes.",
            links=("install.md#linux",),
        ),
        rec("i#0", "install.md", 0, title="Installing neorag", text="Run make."),
        rec("c#0", "p7", 0, title="Marie Curie", text="A physicist."),
        rec("r#0", "p8", 0, title="Radium", text="Radium was found by Marie Curie in 1898."),
        rec("l#0", "p9", 0, title="Lower", text="someone named marie curie in lower case"),
        rec("r#1", "p8", 1, title="Radium", text="Radium again: Radium."),
    ]
    edges = {(e.src, e.dst): e.weight for e in cites_edges(chunks, ANALYZER)}
    assert edges[("g#0", "i#0")] == 1.0  # explicit link to the file
    assert edges[("r#0", "c#0")] == 0.8  # names another document's title
    assert ("l#0", "c#0") not in edges  # case-sensitive: not the title
    assert not any(src.startswith("r#") and dst == "r#0" for src, dst in edges)  # no self-doc


def test_title_matcher_prefers_longest_and_strips_disambiguation() -> None:
    m = TitleMatcher(
        {"a": "Lothair II", "b": "Lothair", "c": "Theodred II (Bishop of Elmham)"}, ANALYZER
    )
    assert m.find("Lothair II married Teutberga.") == {"a": 1}
    assert m.find("Theodred II was a bishop.") == {"c": 1}


def test_utility_links_chunks_answering_similar_questions() -> None:
    chunks = [
        rec("a", "d1", questions=("When was [when] Marie Curie born in Warsaw",)),
        rec("b", "d2", questions=("Marie Curie was born in Warsaw in [when]",)),
        rec("c", "d3", questions=("Which river flows through [where] Cairo",)),
    ]
    edges = {
        (e.src, e.dst)
        for e in utility_edges(chunks, ANALYZER, EdgeConfig(utility_min_similarity=0.3))
    }
    assert edges == {("a", "b")}


def test_related_fuses_with_alpha_and_drops_below_tau() -> None:
    cfg = EdgeConfig(tau=0.1)
    edges = [
        ChunkEdge("SEMANTIC", "a", "b", 0.8),  # .30 * .8 = .24
        ChunkEdge("NEXT", "a", "b", 1.0),  # + .084
        ChunkEdge("CITES", "c", "a", 0.8),  # .083 * .8 = .0664 < τ: dropped
    ]
    fused = related_edges(edges, cfg)
    assert fused == [ChunkEdge("RELATED", "a", "b", pytest.approx(0.324))]


def test_build_returns_all_kinds() -> None:
    chunks = [
        rec("a", "d1", 0, section=("S",), emb=[1, 0], entities=(EntityMention("Ann", "PERSON"),)),
        rec("b", "d1", 1, section=("S",), emb=[1, 0.1], entities=(EntityMention("Ann", "PERSON"),)),
    ]
    kinds = build_chunk_edges(chunks, EdgeConfig(), ANALYZER)
    assert list(kinds) == [
        "SEMANTIC",
        "NEXT",
        "SAME_SECTION",
        "SHARES_ENTITY",
        "CITES",
        "UTILITY",
        "RELATED",
    ]
    assert kinds["RELATED"] and kinds["RELATED"][0].weight <= 1.0
