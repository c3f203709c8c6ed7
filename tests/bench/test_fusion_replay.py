"""The docs suite's fusion replay (`python -m bench docs --fusion-replay`) runs the default
mode's own fusion over stored part rankings: on a collection that mixes long pages with
short notes, its replay of the shipped settings is the live ranking, for a question that
takes the passage match and for one that does not, and a setting it is given changes what
the live mode would change."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from app.engine import Engine
from app.overrides import with_overrides
from app.retrieval.links import doc_id_of
from app.services import index_dir, store_path
from app.settings import Settings
from bench.suites.docs import capture, replay
from graph.embedded.store import EmbeddedStore
from ingest.runner import run_ingest
from tests.conftest import shared_models

pytestmark = pytest.mark.slow
PAGE_TEXT = "the writer thread copies pages from the log into the database file"
PAGE_QUESTION = "when does the writer copy pages into the file?"
NOTE_QUESTION = "which film did Ada Brook star in?"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("replay")
    pages = tmp / "pages"
    pages.mkdir()
    words = PAGE_TEXT.split()
    for n, topic in enumerate(("Checkpoints", "Journal modes")):
        sections = [
            f"## {topic} part {i}\n\n" + " ".join(words[(i + j) % len(words)] for j in range(160))
            for i in range(14)
        ]
        (pages / f"page{n}.md").write_text(f"# {topic}\n\n" + "\n\n".join(sections) + "\n")
    for n, person in enumerate(("Ada Brook", "Carl Dunn", "Eva Fisk")):
        (pages / f"note{n}.md").write_text(f"# {person}\n\n{person} starred in film {n}.\n")
    settings = Settings(data_dir=tmp / "data")
    with EmbeddedStore(store_path(settings)) as store:
        run_ingest(
            pages,
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            models=shared_models(),
        )
    e = Engine(settings)
    try:
        yield e
    finally:
        e.close()


@pytest.mark.parametrize("question", [PAGE_QUESTION, NOTE_QUESTION])
def test_the_shipped_replay_is_the_live_ranking(engine: Engine, question: str) -> None:
    row = capture(engine, question, ["writer"])
    assert row["rankings"]["default"]
    assert replay(row, engine.settings) == row["rankings"]["default"]


def test_a_replayed_setting_does_what_it_does_live(engine: Engine) -> None:
    row = capture(engine, PAGE_QUESTION, ["writer"])
    uncapped = with_overrides(engine.settings, {"retrieval.passage_match_page_share": 1.0})
    live = [
        s.chunk_id
        for s in Engine(uncapped, store=engine.store)
        .retriever("default")
        .retrieve(PAGE_QUESTION)
        .ranking
    ]
    replayed = replay(row, uncapped)
    assert replayed == live
    k = engine.settings.retrieval.top_k
    cap = math.ceil(engine.settings.retrieval.passage_match_page_share * k)
    most = max(sum(doc_id_of(c) == doc_id_of(x) for x in replayed[:k]) for c in replayed[:k])
    assert most > cap  # the shipped cap was lifted, as the live mode lifts it
