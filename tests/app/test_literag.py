"""LiteRAG on a real (tiny) index: ten passages where a musician's birthplace is named only in
her own passage and the town's founder only in the town's, among towns that were all
"founded" by someone, so the town can be told apart only by following the chain. The
helpers (threshold, hub penalty, fuzzy names) are also checked on hand-made cases."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.engine import Engine, doc_id_of
from app.retrieval.base import RetrievalResult
from app.retrieval.baselines import DenseRetriever
from app.retrieval.literag import (
    GraphTables,
    LiteragRetriever,
    NameIndex,
    Reach,
    graph_tables,
    hub_factor,
    threshold,
)
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.types import EDGE_KINDS, ChunkEdge
from ingest.runner import run_ingest
from tests.ids import name_of, names

PASSAGES = {
    "mara": (
        "Mara Velloni",
        "Mara Velloni (1921–1988) was an Italian violinist and teacher. She was born in "
        "Castelbruno and later taught at the Milan Conservatory.",
    ),
    "castelbruno": (
        "Castelbruno",
        "Castelbruno is a hill town in the northern Apennines, known for its chestnut woods. "
        "The monk Aldric of Torre founded it in 1130 around a small abbey.",
    ),
    "orvanto": (
        "Orvanto",
        "Orvanto is a market town on the Tiber plain. It was founded by the merchant Bertoldo "
        "Sanna in 1204.",
    ),
    "sarnello": (
        "Sarnello",
        "Sarnello is a fishing town on the Adriatic coast, founded by Venetian settlers in 1310.",
    ),
    "lucio": (
        "Lucio Ferrante",
        "Lucio Ferrante (1930–2001) was an Italian cellist. He was born in Orvanto and played "
        "with the Rome Symphony.",
    ),
    "teodora": (
        "Teodora Velli",
        "Teodora Velli is an Italian violinist born in Sarnello in 1975. She won the Paganini "
        "Competition in 1996.",
    ),
    "conservatory": (
        "Milan Conservatory",
        "The Milan Conservatory is a college of music founded in 1807 by a decree of Napoleon. "
        "Many violinists studied there.",
    ),
    "aldric": (
        "Aldric of Torre",
        "Aldric of Torre (c. 1090–1161) was a Benedictine monk and a builder of abbeys in the "
        "Apennines.",
    ),
    "chestnut": (
        "Chestnut flour",
        "Chestnut flour is used in mountain cooking across the Apennines, in breads and polenta.",
    ),
    "paganini": (
        "Paganini Competition",
        "The Paganini Competition is an international violin competition held in Genoa since 1954.",
    ),
}
TWO_HOP = "Who founded the town where Mara Velloni was born?"


@dataclass(slots=True)
class Index:
    engine: Engine
    retriever: LiteragRetriever
    chunks: int


def build(root: Path) -> Settings:
    settings = Settings(backend="embedded", data_dir=root / "data")
    corpus = root / "docs" / "corpus.jsonl"
    corpus.parent.mkdir(parents=True)
    lines = [json.dumps({"id": k, "title": t, "text": x}) for k, (t, x) in PASSAGES.items()]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with EmbeddedStore(store_path(settings)) as store:
        report = run_ingest(
            corpus, store, settings.ingest, settings.algorithms, index_dir(settings)
        )
    assert report.ok
    return settings


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    engine = Engine(build(tmp_path_factory.mktemp("literag")))
    try:
        yield Index(engine, LiteragRetriever(engine), len(engine.dense))
    finally:
        engine.close()


# ---- the real index ---------------------------------------------------------------------
def test_two_hop_question_reaches_the_bridge_and_explains_it(index: Index) -> None:
    result = index.retriever.retrieve(TWO_HOP, top_k=5)
    ranked = names(result.doc_ranking())
    assert ranked[0] == "mara"
    assert "castelbruno" in ranked[:3], ranked
    dense = names(DenseRetriever(index.engine).retrieve(TWO_HOP, top_k=5).doc_ranking())
    assert ranked.index("castelbruno") <= dense.index("castelbruno")

    heads = {c.split(': "', 1)[0]: c for c in result.chains}
    kinds = "|".join((*EDGE_KINDS, "CITED_BY", "PREV", "RELATED"))
    step = re.compile(rf"^Mara Velloni —(?:{kinds})(?:\+(?:{kinds}))*→ Castelbruno$")
    linked = [c for head, c in heads.items() if step.match(head)]
    assert linked, result.chains
    assert "CITES" in linked[0]  # Mara's passage names the town
    assert "Aldric of Torre founded it" in linked[0]  # the town's sentence closest to the question


def test_trace_reports_every_stage(index: Index) -> None:
    result = index.retriever.retrieve(TWO_HOP)
    steps = {s.name: s.details for s in result.trace.steps}
    assert {"anchors", "expansion", "ranking", "chains"} <= set(steps)
    anchors = steps["anchors"]["anchors"]
    assert 0 < len(anchors) <= index.engine.settings.retrieval.literag.anchors
    assert all(0.0 <= s <= 1.0 for s in anchors.values())
    expansion = [s.details for s in result.trace.steps if s.name == "expansion"]
    assert expansion[0]["explored"] <= index.engine.settings.retrieval.literag.max_nodes
    assert all(0.3 <= t <= 1.0 for s in expansion for t in s["thetas"])
    assert steps["chains"]["count"] == len(result.chains)
    assert steps["chains"]["sample"] == result.chains[:2]
    assert result.trace.hops and {"hop", "chunks", "entities"} <= set(result.trace.hops[0])


def test_ranking_is_long_sorted_and_unique(index: Index) -> None:
    result = index.retriever.retrieve(TWO_HOP, top_k=5)
    assert len(result.ranking) >= min(10, index.chunks)
    assert len({s.chunk_id for s in result.ranking}) == len(result.ranking)
    scores = [s.score for s in result.ranking]
    assert scores == sorted(scores, reverse=True)
    assert len(result.context) == 5


def test_chains_respect_the_token_budget(index: Index) -> None:
    count = index.engine.query_model.count_tokens
    full = index.retriever.retrieve(TWO_HOP)
    assert sum(count(c) for c in full.chains) <= 2000
    tight = index.engine.settings.retrieval.model_copy(deep=True)
    tight.literag.chain_budget_tokens = 64
    retriever = LiteragRetriever(index.engine)
    retriever.cfg = tight
    small = retriever.retrieve(TWO_HOP)
    assert sum(count(c) for c in small.chains) <= 64
    assert len(small.chains) < len(full.chains)
    assert all(c in full.chains for c in small.chains)


def test_deterministic_across_calls_and_retrievers(index: Index) -> None:
    def snapshot(r: RetrievalResult) -> tuple[Any, ...]:
        return ([(s.chunk_id, s.score) for s in r.ranking], r.chains, r.trace.hops)

    first = snapshot(index.retriever.retrieve(TWO_HOP))
    again = snapshot(index.retriever.retrieve(TWO_HOP))
    fresh = snapshot(LiteragRetriever(index.engine).retrieve(TWO_HOP))
    assert first == again == fresh
    assert graph_tables(index.engine) is graph_tables(index.engine)  # cached per graph


@pytest.mark.parametrize(
    "question, note",
    [
        ("Which of them is it and where?", "no searchable words"),
        ("Zorblat quintexx vrummeling?", "none of the question's words occur"),
    ],
)
def test_bad_questions_return_notes_not_errors(index: Index, question: str, note: str) -> None:
    result = index.retriever.retrieve(question)
    assert any(note in n for n in result.trace.notes), result.trace.notes
    assert isinstance(result.chains, list)
    assert len(result.ranking) >= min(10, index.chunks)  # meaning alone still ranks


def test_empty_index_gives_an_empty_result_with_a_note(tmp_path: Path) -> None:
    engine = Engine(Settings(backend="embedded", data_dir=tmp_path))
    try:
        result = LiteragRetriever(engine).retrieve(TWO_HOP)
    finally:
        engine.close()
    assert result.ranking == [] and result.chains == []
    assert any("empty" in n for n in result.trace.notes)


def test_fuzzy_title_match_anchors_a_misspelt_name(index: Index) -> None:
    result = index.retriever.retrieve("Where was Lucio Ferante born?")
    top = result.ranking[0]
    assert name_of(doc_id_of(top.chunk_id)) == "lucio"
    assert top.signals["fuzzy"] > 0.5


# ---- helpers on hand-made cases -----------------------------------------------------------
def test_threshold_follows_anchor_strength_between_floor_and_one() -> None:
    assert threshold(0.9, floor=0.3, ratio=0.6) == pytest.approx(0.54)
    assert threshold(0.2, floor=0.3, ratio=0.6) == 0.3
    assert threshold(1.0, floor=0.3, ratio=1.0) == 1.0
    assert threshold(5.0, floor=0.3, ratio=0.6) == 1.0


def test_hub_penalty_is_milder_inside_the_community() -> None:
    assert hub_factor(0, 5.0, 0.5, same_community=False) == 1.0
    assert hub_factor(5, 5.0, 0.5, False) == 1.0  # up to the mean degree: no penalty
    assert hub_factor(40, 5.0, 0.5, False) < hub_factor(10, 5.0, 0.5, False) < 1.0
    assert hub_factor(40, 5.0, 0.5, False) < hub_factor(40, 5.0, 0.5, True) < 1.0
    assert hub_factor(40, 5.0, 0.0, False) == 1.0


class EdgeStore:
    def __init__(self, edges: list[ChunkEdge]) -> None:
        self.edges = edges

    def neighbours(self, ids: list[str], kinds: list[str] | None = None) -> list[ChunkEdge]:
        return [e for e in self.edges if e.src in ids or e.dst in ids]


def test_hub_penalty_lowers_a_hubs_rank() -> None:
    """From anchor `a`, a hub and a leaf behind equally strong edges: the hub goes second,
    and it loses less when it is in `a`'s community."""
    edges = [ChunkEdge("RELATED", "a", b, 0.5) for b in ("hub", "leaf")]
    every = frozenset(c for e in edges for c in (e.src, e.dst))
    engine = SimpleNamespace(
        settings=Settings(backend="embedded"), store=EdgeStore(edges), indexed=every
    )
    retriever = LiteragRetriever(cast(Engine, engine))
    reaches = {"a": Reach("a", "a", None, 0, 0.9)}

    def moves(community: dict[str, int]) -> dict[str, float]:
        tables = GraphTables(
            key=(),
            names=NameIndex({}),
            community=community,
            community_tokens={},
            degree={"a": 2, "hub": 40, "leaf": 3},
            mean_degree=5.0,
            lexical_pos={},
        )
        found, _ = retriever._moves(["a"], reaches, tables)
        assert [b for _, _, b in found] == ["leaf", "hub"]
        return {b: p for p, _, b in found}

    apart = moves({"a": 0, "hub": 1, "leaf": 1})
    together = moves({"a": 0, "hub": 0, "leaf": 1})
    assert apart["hub"] < together["hub"] < apart["leaf"] == together["leaf"]


def test_fuzzy_lookup_matches_difflib_on_every_name() -> None:
    names = ["lothair ii", "ermengarde of tours", "castelbruno", "orvanto", "the heart of doreon"]
    index = NameIndex({n: {n: 1.0} for n in names})
    queries = ["lothair ii", "lothaire ii", "castelbrunno", "heart of doreon", "orvieto", "tours"]
    for query, ratio in itertools.product(queries, (0.7, 0.85)):
        brute = {n: SequenceMatcher(None, n, query, autojunk=False).ratio() for n in names}
        expected = {n: sim for n, sim in brute.items() if sim >= ratio}
        found = {index.names[i]: sim for i, sim in index.lookup(query, ratio)}
        assert found == pytest.approx(expected), (query, ratio)
    assert [index.names[i] for i, _ in index.lookup("lothaire ii", 0.85)] == ["lothair ii"]
    assert index.lookup("orvieto", 0.85) == []


def test_every_snapshot_of_an_engine_shares_its_tables(index: Index) -> None:
    from app.retrieval.literag_tables import graph_tables

    tables = graph_tables(index.engine)
    assert graph_tables(index.engine.snapshot()) is tables
    assert graph_tables(index.engine.snapshot()) is tables
