"""`neorag eval` on a folder corpus (a documentation tree): page-level recall and whether
the answer string is in the retrieved chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.eval.harness import Dataset, run_eval
from app.overrides import with_overrides
from app.settings import Settings

pytestmark = pytest.mark.slow

PAGES = {
    "install.md": "# Installing\n\nRun `pip install kelp` to install Kelp. It needs Python 3.11.\n",
    "config.md": (
        "# Configuration\n\n## Cache\n\nThe cache lives in `~/.kelp/cache`. Its size limit is "
        "set with `cache_max_mb`, which defaults to 512.\n"
    ),
    "cli.md": "# Command line\n\nUse `kelp sync` to upload notes and `kelp prune` to clean.\n",
}
QUESTIONS = [
    {
        "id": "d1",
        "question": "What is the default cache size limit?",
        "answers": ["512"],
        "gold_pages": ["config.md"],
        "type": "single",
    },
    {
        "id": "d2",
        "question": "How do I install kelp and which Python does it need?",
        "answers": ["Python 3.11"],
        "gold_pages": ["install.md"],
        "type": "single",
    },
]


def test_folder_dataset_reports_page_recall_and_answer_share(tmp_path: Path) -> None:
    data = tmp_path / "kelp-docs"
    for name, text in PAGES.items():
        (data / "pages" / name).parent.mkdir(parents=True, exist_ok=True)
        (data / "pages" / name).write_text(text, encoding="utf-8")
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (data / "meta.json").write_text(json.dumps({"name": "kelp-docs", "kind": "folder"}))
    dataset = Dataset.load(data)
    assert dataset.kind == "folder" and dataset.corpus == data / "pages"
    before = dataset.content_hash()
    report = run_eval(Settings(data_dir=tmp_path / "store"), dataset, ["hybrid", "default"])
    assert report["kind"] == "folder" and report["collection"] == "eval-kelp-docs"
    for row in report["results"].values():
        assert row["recall@2"] == 100.0
        assert row["answer@5"] == 100.0 and row["answer_in_context"] == 100.0
    # One-chunk pages: passage match joins no question unless forced, and the run says so.
    assert "passage match" not in report["results"]["default"]["questions_noted"]
    forced = with_overrides(
        Settings(data_dir=tmp_path / "store"), {"retrieval.passage_match": "on"}
    )
    noted = run_eval(forced, dataset, ["default"])["results"]["default"]["questions_noted"]
    assert noted["passage match"] == len(QUESTIONS)

    (data / "pages" / "config.md").write_text("# Configuration\n\nNothing about caches.\n")
    changed = Dataset.load(data)
    assert changed.content_hash() != before
    again = run_eval(Settings(data_dir=tmp_path / "store"), changed, ["hybrid"], per_question=True)
    assert again["results"]["hybrid"]["answer@5"] == 50.0  # the 512 is gone from the corpus
    rows = {r["id"]: r for r in again["results"]["hybrid"]["per_question"]}
    assert rows["d1"]["answer@5"] is False and rows["d2"]["answer@5"] is True
    assert rows["d2"]["first_gold_rank"] == 1 and rows["d2"]["recall@2"] == 1.0
    assert "per_question" not in report["results"]["hybrid"]  # only when asked for


def test_a_folder_dataset_needs_gold_pages(tmp_path: Path) -> None:
    data = tmp_path / "bad"
    (data / "pages").mkdir(parents=True)
    (data / "pages" / "a.md").write_text("# A\n\ntext\n")
    (data / "questions.jsonl").write_text(json.dumps({"id": "x", "question": "q?"}) + "\n")
    with pytest.raises(Exception, match="needs question and gold_pages"):
        Dataset.load(data)


@pytest.mark.parametrize(("half", "ids"), [("even", ["q0", "q2", "q4"]), ("odd", ["q1", "q3"])])
def test_a_half_is_every_other_question_by_position(tmp_path: Path, half, ids) -> None:
    data = tmp_path / "halves"
    (data / "pages").mkdir(parents=True)
    (data / "pages" / "a.md").write_text("# A\n\ntext\n")
    rows = [json.dumps({"id": f"q{i}", "question": "q?", "gold_pages": ["a.md"]}) for i in range(5)]
    (data / "questions.jsonl").write_text("\n\n".join(rows) + "\n")  # blank lines not counted
    assert [q["id"] for q in Dataset.load(data, half=half).questions] == ids
    assert [q["id"] for q in Dataset.load(data, limit=1, half=half).questions] == ids[:1]
    assert Dataset.load(data, half=half).half == half and Dataset.load(data).half is None
    with pytest.raises(Exception, match="half must be"):
        Dataset.load(data, half="first")


def test_distractors_are_indexed_beside_the_corpus_in_a_collection_of_their_own(
    tmp_path: Path,
) -> None:
    """`--distractors`: the other dataset's corpus shares the collection (so its documents
    compete in the ranking), only this dataset's questions are asked, and the plain
    evaluation's collection is left as it was."""
    data = tmp_path / "kelp-docs"
    for name, text in PAGES.items():
        (data / "pages" / name).parent.mkdir(parents=True, exist_ok=True)
        (data / "pages" / name).write_text(text, encoding="utf-8")
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    other = tmp_path / "notes"
    other.mkdir()
    passages = [
        {"id": f"n{i}", "title": f"Note {i}", "text": f"Note {i} says the cache is emptied daily."}
        for i in range(6)
    ]
    (other / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    (other / "questions.jsonl").write_text(
        json.dumps({"id": "o", "question": "When is it emptied?", "gold_ids": ["n0"]}) + "\n"
    )
    settings = Settings(data_dir=tmp_path / "store")
    plain = run_eval(settings, Dataset.load(data), ["hybrid"])
    mixed = run_eval(settings, Dataset.load(data), ["hybrid"], distractors=Dataset.load(other))
    assert plain["collection"] == "eval-kelp-docs" and plain["documents"] == 3
    assert mixed["collection"] == "eval-mix-kelp-docs-notes"
    assert mixed["distractors"] == "notes" and mixed["documents"] == 3 + 6
    assert mixed["questions"] == len(QUESTIONS)
    assert mixed["results"]["hybrid"]["recall@2"] == 100.0
    again = run_eval(settings, Dataset.load(data), ["hybrid"])  # untouched, not re-indexed
    assert again["documents"] == 3 and again["index_seconds"] == plain["index_seconds"]
    reverse = run_eval(settings, Dataset.load(other), ["hybrid"], distractors=Dataset.load(data))
    assert reverse["collection"] == mixed["collection"]  # the same index, not built again
    assert reverse["index_seconds"] == mixed["index_seconds"] and reverse["documents"] == 9


def test_eval_refuses_a_distractors_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    """A one-line error, exit 2, and nothing indexed: both datasets load before any ingest."""
    from typer.testing import CliRunner

    from app import cli

    data = tmp_path / "kelp-docs"
    for name, text in PAGES.items():
        (data / "pages" / name).parent.mkdir(parents=True, exist_ok=True)
        (data / "pages" / name).write_text(text, encoding="utf-8")
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (tmp_path / "empty").mkdir()
    store = tmp_path / "store"
    result = CliRunner().invoke(
        cli.app,
        ["eval", str(data), "--distractors", str(tmp_path / "empty"), "--backend", "embedded"],
        env={"NEORAG_DATA_DIR": str(store)},
    )
    assert result.exit_code == 2
    message = result.output.strip()
    assert "needs corpus.jsonl (or pages/) and questions.jsonl" in message
    assert len(message.splitlines()) == 1
    assert not store.exists()
