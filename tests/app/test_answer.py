"""The extractive answer on a real (small) index: the short answer comes first, evidence
sentences are cited and said once, `ask --json` carries both, and `neorag eval --answer
offline` reports EM, F1 and answer_hit per mode. Builds an index and loads models: slow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.answer import evidence_sentences, extractive_answer
from app.cli import app
from app.engine import Engine
from app.eval.harness import Dataset, run_eval
from app.eval.metrics import normalize_answer
from app.reader.spans import MAX_WORDS
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.errors import NeoragError
from ingest.runner import run_ingest
from tests.conftest import dataset_file

pytestmark = pytest.mark.slow

QUESTIONS = 3  # the first HotpotQA questions; each comes with its own ten passages


@pytest.fixture(scope="module")
def hotpot_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset folder with the first questions of hotpotqa-200 and the passages of their
    distractor settings (p0…p29), small enough to index in a test."""
    folder = tmp_path_factory.mktemp("hotpot-slice")
    corpus = dataset_file("hotpotqa-200", "corpus.jsonl").read_text(encoding="utf-8")
    questions = dataset_file("hotpotqa-200", "questions.jsonl").read_text(encoding="utf-8")
    keep = {f"p{i}" for i in range(10 * QUESTIONS)}
    lines = [ln for ln in corpus.splitlines() if json.loads(ln)["id"] in keep]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "questions.jsonl").write_text(
        "\n".join(questions.splitlines()[:QUESTIONS]) + "\n", encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def settings(hotpot_slice: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # the layout of a shown short answer is under test here, not when one is shown
    # (tests/app/test_answer_support.py, tests/test_readme_examples.py): always show it
    settings = Settings(
        backend="embedded",
        data_dir=tmp_path_factory.mktemp("answer-data"),
        answer_min_confidence=0.0,
    )
    with EmbeddedStore(store_path(settings)) as store:
        report = run_ingest(
            hotpot_slice / "corpus.jsonl",
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
        )
    assert report.ok
    return settings


@pytest.fixture(scope="module")
def engine(settings: Settings) -> Iterator[Engine]:
    e = Engine(settings)
    yield e
    e.close()


COUNTERPARTS = (
    'Which Canadian rock band released a song called "Counterparts" and had a drummer who was '
    "inducted into the Modern Drummer Hall of Fame?"
)


def test_short_answer_first_then_cited_evidence(engine: Engine) -> None:
    result = engine.retriever("default").retrieve(COUNTERPARTS)
    ans = extractive_answer(engine, result)
    assert ans.short == "Rush"
    assert ans.text.startswith("Rush [")
    assert 1 <= len(ans.short.split()) <= MAX_WORDS
    assert ans.evidence and ans.citations
    first_sentence = ans.evidence[0][1]
    assert "Rush" in first_sentence  # the sentence the short answer was read from leads
    for n, sentence in ans.evidence:
        assert sentence in result.context[n - 1].text
        assert f"{sentence} [{n}]" in ans.text
    assert ans.as_dict()["short"] == "Rush"


def test_sentences_repeated_by_overlapping_chunks_count_once(engine: Engine) -> None:
    result = engine.retriever("default").retrieve(COUNTERPARTS)
    # Overlapping chunk windows repeat sentences; here a chunk comes back twice under
    # another id, and its sentences reworded only in case and spacing.
    copy = replace(result.context[0], id=result.context[0].id + "-copy")
    shouting = replace(
        result.context[1], id=result.context[1].id + "-loud", text=result.context[1].text.upper()
    )
    result.context = [*result.context, copy, shouting]
    sentences = evidence_sentences(engine, result)
    keys = [normalize_answer(e.text) for e in sentences]
    assert len(keys) == len(set(keys))
    assert all(e.passage <= len(result.context) - 2 for e in sentences)  # originals kept
    ans = extractive_answer(engine, result)
    said = [normalize_answer(s) for _, s in ans.evidence]
    assert len(said) == len(set(said))


def test_a_line_of_code_is_evidence_however_short(engine: Engine) -> None:
    result = engine.retriever("default").retrieve(COUNTERPARTS)
    first = result.context[0]
    lines = "immutable=1\n\nSee also.\n\nPRAGMA busy_timeout;"
    result.context = [replace(first, id=first.id + "-doc", text=lines), *result.context]
    said = {e.text for e in evidence_sentences(engine, result)}
    assert "immutable=1" in said  # code, though one word
    assert "See also." not in said  # two words of prose say nothing


def test_ask_json_carries_the_short_answer(settings: Settings) -> None:
    env = {"NEORAG_DATA_DIR": str(settings.data_dir), "NEORAG_BACKEND": "embedded"}
    env["NEORAG_ANSWER_MIN_CONFIDENCE"] = "0"
    env["NEORAG_LLM__PROVIDER"] = None  # type: ignore[assignment]  # unset: no chat model
    out = CliRunner().invoke(app, ["ask", COUNTERPARTS, "--json"], env=env)
    assert out.exit_code == 0, out.output[-2000:]
    answer = json.loads(out.stdout)["answer"]
    assert answer["short"] == "Rush" and answer["extractive"]
    assert answer["evidence"] and {"chunk", "sentence"} <= set(answer["evidence"][0])
    plain = CliRunner().invoke(app, ["ask", COUNTERPARTS], env=env)
    assert plain.exit_code == 0 and plain.stdout.lstrip().startswith("Rush [")


def test_eval_reports_answer_metrics_per_mode(hotpot_slice: Path, tmp_path: Path) -> None:
    settings = Settings(backend="embedded", data_dir=tmp_path / "data")
    dataset = Dataset.load(hotpot_slice)
    report = run_eval(settings, dataset, ["default", "bm25"], answer="offline")
    assert set(report["results"]) == {"default", "bm25"}
    for row in report["results"].values():
        for key in ("em", "f1", "answer_hit", "answer_ms_p50", "answer_ms_p95"):
            assert row[key] is not None, key
        assert 0 <= row["answer_coverage"] <= 100 and 0 <= row["answer_precision"] <= 100
        assert 0 <= row["em"] <= row["f1"] <= 100
        assert row["em"] <= row["answer_hit"] <= 100
    # The metrics are the share of questions: a perfect answerer scores 100 on all three,
    # one naming the answer inside a longer phrase only on answer_hit.
    gold = {q["question"]: q["answers"][0] for q in dataset.questions}
    perfect = run_eval(settings, dataset, ["bm25"], answerer=lambda q, r: gold[q])
    assert {k: perfect["results"]["bm25"][k] for k in ("em", "f1", "answer_hit")} == {
        "em": 100.0,
        "f1": 100.0,
        "answer_hit": 100.0,
    }
    wordy = run_eval(
        settings,
        dataset,
        ["bm25"],
        answerer=lambda q, r: f"it is {gold[q]} here",
        per_question=True,
    )
    row = wordy["results"]["bm25"]
    assert row["em"] == 0.0 and row["answer_hit"] == 100.0 and 0 < row["f1"] < 100
    # Per question, the short answer beside the gold ones, for reading the misses.
    for one in row["per_question"]:
        assert one["short_answer"] == f"it is {gold[one['question']]} here"
        assert one["answers"][0] == gold[one["question"]] and one["answer_hit"]
    # answer_precision scores only the picks a user is shown: here the first question's
    # wrong pick is shown, the others' right picks one in two
    order = [q["question"] for q in dataset.questions]

    def picky(q: str, r: object) -> tuple[str, bool]:
        at = order.index(q)
        return ("nobody", True) if at == 0 else (gold[q], at % 2 == 1)

    graded = run_eval(settings, dataset, ["bm25"], answerer=picky)["results"]["bm25"]
    shown = 1 + sum(1 for at in range(1, len(order)) if at % 2 == 1)
    assert graded["answer_coverage"] == round(100 * shown / len(order), 2)
    assert graded["answer_precision"] == round(100 * (shown - 1) / shown, 2)
    assert wordy["results"]["bm25"]["answer_precision"] is None  # a bare pick says nothing
    with pytest.raises(NeoragError, match="unknown answerer"):
        run_eval(settings, dataset, ["default"], answer="oracle")


def test_eval_cli_writes_answer_metrics(hotpot_slice: Path, tmp_path: Path) -> None:
    env = {"NEORAG_DATA_DIR": str(tmp_path / "data"), "NEORAG_BACKEND": "embedded"}
    out_json = tmp_path / "report.json"
    args = ["eval", str(hotpot_slice), "--modes", "default", "--answer", "offline"]
    run = CliRunner().invoke(app, [*args, "--json", str(out_json)], env=env)
    assert run.exit_code == 0, run.output[-2000:]
    row = json.loads(out_json.read_text())["results"]["default"]
    assert {"em", "f1", "answer_hit"} <= set(row) and row["answer_hit"] is not None
    assert "answer_hit" in run.stdout  # the table has the column
    bad = CliRunner().invoke(app, ["eval", str(hotpot_slice), "--answer", "llm"], env=env)
    assert bad.exit_code == 2 and "unknown answerer" in bad.stderr
    assert isinstance(bad.exception, SystemExit)  # a message, not an exception
