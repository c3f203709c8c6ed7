"""TIGRAG's entity hops on a comparison question: "which film's director …, A or B?"
names two films, and each needs its own hop to reach its director. Hop 1 expands the
best-ranked chunk (one film) and finds its director, whose page then ranks high; hop 2
expands the other film the question names (`hop_named_first`), not that director's page.
The films the question names also rank above the pages hops link (`named_on_top`).
Builds a small real index: slow."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from app.engine import Engine, doc_id_of
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.runner import run_ingest
from tests.ids import name_of, names

pytestmark = pytest.mark.slow

PASSAGES = [
    (
        "f1",
        "Playing It Wild",
        "Playing It Wild is a 1923 American silent western film directed "
        "by William Duncan and starring Duncan and Edith Johnson.",
    ),
    (
        "f2",
        "I'll Be Going Now",
        "I'll Be Going Now is a 1990 Italian comedy-drama film directed by Dino Risi.",
    ),
    (
        "d1",
        "William Duncan",
        "William Duncan (December 16, 1879 – February 7, 1961), born in "
        "Dundee, Scotland, was an actor, producer and director of silent westerns with Edith "
        "Johnson.",
    ),
    ("d2", "Dino Risi", "Dino Risi (23 December 1916 – 7 June 2008) was an Italian film director."),
    (
        "x1",
        "Edith Johnson",
        "Edith Johnson was an American actress of silent westerns who married William Duncan.",
    ),
    (
        "x2",
        "Dundee",
        "Dundee is a city in Scotland on the Firth of Tay, birthplace of William "
        "Duncan and many others.",
    ),
    ("x3", "Bill Dundee", "Bill Dundee is a Scottish professional wrestler who played it wild."),
    ("x4", "Going Now", "Going Now is a 1990 song about leaving, played on Italian radio."),
]
QUESTION = "Which film has the director who was born later, Playing It Wild or I'll Be Going Now?"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("hops")
    corpus = tmp / "films" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in PASSAGES),
        encoding="utf-8",
    )
    settings = Settings(data_dir=tmp / "data")
    with EmbeddedStore(store_path(settings)) as store:
        assert run_ingest(
            corpus.parent, store, settings.ingest, settings.algorithms, index_dir(settings)
        ).ok
    e = Engine(settings)
    yield e
    e.close()


def hop_documents(
    engine: Engine, named_first: bool, on_top: bool = True
) -> tuple[list[str], list[str]]:
    retriever = engine.retriever("tigrag")
    cfg = retriever.cfg.model_copy(deep=True)
    cfg.tigrag.hop_named_first = named_first
    cfg.tigrag.named_on_top = on_top
    retriever.cfg = cfg
    result = retriever.retrieve(QUESTION, top_k=5)
    expanded = [name_of(doc_id_of(c)) for h in result.trace.hops for c in h["chunks"]]
    return expanded, names(result.doc_ranking()[:5])


def test_the_second_hop_expands_the_other_named_film(engine: Engine) -> None:
    expanded, top = hop_documents(engine, named_first=True)
    assert len(expanded) == 2 and set(expanded) <= {"f1", "f2"}, expanded
    assert {"f1", "f2", "d1", "d2"} <= set(top), top  # both films, both directors


def test_without_the_rule_hop_two_follows_the_first_director(engine: Engine) -> None:
    off, _ = hop_documents(engine, named_first=False)
    on, _ = hop_documents(engine, named_first=True)
    assert off[0] == on[0]  # hop 1 is unchanged: the best-ranked chunk
    assert off[1] == {"f1": "d1", "f2": "d2"}[off[0]]  # the page hop 1 just found


def test_the_documents_the_question_names_rank_first(engine: Engine) -> None:
    _, top = hop_documents(engine, named_first=True, on_top=True)
    assert set(top[:2]) == {"f1", "f2"}, top
    # without it a director a hop linked outranks the films the question names
    _, top = hop_documents(engine, named_first=True, on_top=False)
    assert set(top[:2]) != {"f1", "f2"}, top
