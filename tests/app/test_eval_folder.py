"""`neorag eval` on a folder corpus (a documentation tree): page-level recall and whether
the answer string is in the retrieved chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.eval.harness import Dataset, run_eval
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

    (data / "pages" / "config.md").write_text("# Configuration\n\nNothing about caches.\n")
    changed = Dataset.load(data)
    assert changed.content_hash() != before
    again = run_eval(Settings(data_dir=tmp_path / "store"), changed, ["hybrid"])
    assert again["results"]["hybrid"]["answer@5"] == 50.0  # the 512 is gone from the corpus


def test_a_folder_dataset_needs_gold_pages(tmp_path: Path) -> None:
    data = tmp_path / "bad"
    (data / "pages").mkdir(parents=True)
    (data / "pages" / "a.md").write_text("# A\n\ntext\n")
    (data / "questions.jsonl").write_text(json.dumps({"id": "x", "question": "q?"}) + "\n")
    with pytest.raises(Exception, match="needs question and gold_pages"):
        Dataset.load(data)
