"""Every `neorag ask "…"` the README shows is answered right from the bundled sample corpus
by the offline reader, and nonsense or out-of-corpus questions get "not found in the
corpus", not a confident short answer. The sample is indexed as `neorag ingest
sample_corpus` would (embedded backend, a temporary data folder); loads models: slow."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from app.answer import Answer, extractive_answer
from app.engine import Engine
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.runner import run_ingest
from tests.conftest import REPO, shared_models

pytestmark = pytest.mark.slow

README = REPO / "README.md"
NONSENSE = REPO / "bench" / "datasets" / "nonsense-questions.jsonl"
_ASK = re.compile(r'neorag ask "([^"]+)"((?:[ \t]+--?[\w-]+(?:[ \t]+[^\s-]\S*)?)*)')

# What a right answer holds, per README question: ("short", s) the short answer is s;
# ("cited", s) s is in the short answer or in a cited sentence; ("described", s) no short
# answer (the question asks for a description) and s is in a cited sentence.
EXPECTED: dict[str, tuple[str, str]] = {
    "Which Canadian rock band released a song called Counterparts?": ("short", "Rush"),
    "How do I start Neo4j without Docker?": ("cited", "make neo4j-start"),
    "What is the graph model?": ("described", "two graphs side by side"),
}


def readme_questions() -> list[tuple[str, str, int | None]]:
    """(question, mode, top-k) of every `neorag ask` example; "..." stands for any question."""
    out = []
    for question, flags in _ASK.findall(README.read_text(encoding="utf-8")):
        if not re.search(r"\w", question):
            continue
        words = flags.split()
        options = dict(zip(words[::2], words[1::2], strict=False))
        top_k = options.get("--top-k")
        out.append((question, options.get("--mode", "default"), int(top_k) if top_k else None))
    return out


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    settings = Settings(backend="embedded", data_dir=tmp_path_factory.mktemp("readme-data"))
    with EmbeddedStore(store_path(settings)) as store:
        report = run_ingest(
            REPO / "sample_corpus",
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            models=shared_models(),
        )
    assert report.ok
    e = Engine(settings)
    yield e
    e.close()


def ask(engine: Engine, question: str, mode: str = "default", top_k: int | None = None) -> Answer:
    return extractive_answer(engine, engine.retriever(mode).retrieve(question, top_k=top_k))


def test_the_readme_examples_are_found() -> None:
    asked = [q for q, _, _ in readme_questions()]
    assert len(asked) >= 3
    missing = sorted(set(asked) - set(EXPECTED))
    assert not missing, f"say in EXPECTED what answers these README questions: {missing}"


@pytest.mark.parametrize(("question", "mode", "top_k"), readme_questions())
def test_every_readme_question_is_answered_right(
    engine: Engine, question: str, mode: str, top_k: int | None
) -> None:
    ans = ask(engine, question, mode, top_k)
    how, expected = EXPECTED[question]
    cited = " ".join(sentence for _, sentence in ans.evidence)
    if how == "short":
        assert ans.short == expected, ans.text
        assert not ans.abstained
    elif how == "cited":
        assert expected in ans.short or expected in cited, ans.text
    else:
        assert ans.short == "" and ans.abstained, ans.text
        assert expected in cited, ans.text
    if ans.short:  # a shown short answer is cited like the rest
        assert ans.text.startswith(f"{ans.short} [")


def test_nonsense_and_out_of_corpus_questions_are_not_found(engine: Engine) -> None:
    questions = [json.loads(line)["question"] for line in NONSENSE.read_text().splitlines()]
    assert len(questions) >= 10
    shown = {q: a.short for q in questions if (a := ask(engine, q)).short or not a.abstained}
    assert not shown, f"confident short answers to nonsense: {shown}"
    for question in questions:
        assert ask(engine, question).text.startswith("Not found in the corpus")


def test_a_question_of_no_words_cites_the_closest_passages(engine: Engine) -> None:
    ans = ask(engine, "🚀🚀🚀")
    assert ans.abstained and ans.short == ""
    assert ans.text.startswith("Not found in the corpus; the closest passages:")
    assert ans.evidence and all(f"[{n}]" in ans.text for n, _ in ans.evidence)
