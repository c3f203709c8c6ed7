"""The documentation-corpus benchmarks under bench/datasets/ are sound (their README's
claims: every answer string occurs in a gold page as neorag's loader extracts it, at least
half the questions are two-page, meta.json counts match), and the checker that says so
finds what is wrong in a broken copy."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[2] / "bench" / "datasets"
sys.path.insert(0, str(DATASETS))

from check_folder import check  # noqa: E402

SETS = sorted(p.name for p in DATASETS.iterdir() if (p / "questions.jsonl").is_file())


def test_the_documentation_sets_are_bundled() -> None:
    assert {"sqlite-docs", "git-docs", "postgres-docs"} <= set(SETS)


@pytest.mark.parametrize("name", SETS)
def test_a_bundled_set_passes_its_check(name: str) -> None:
    assert check(DATASETS / name) == []


def test_the_check_reports_what_a_broken_copy_gets_wrong(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(DATASETS / "git-docs", folder)
    lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["answers"] = ["an answer no page holds"]
    second["gold_pages"] = ["no-such-page.html", second["gold_pages"][-1]]
    duplicate = dict(json.loads(lines[2]), question="another wording")
    lines = [json.dumps(first), json.dumps(second), *lines[2:], json.dumps(duplicate)]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = check(folder)
    assert f"{first['id']}: answer 'an answer no page holds' is in none of its gold pages" in (
        problems
    )
    assert f"{second['id']}: gold page no-such-page.html does not exist" in problems
    assert f"{duplicate['id']}: duplicate id" in problems
    assert any(p.startswith("meta.json counts.questions is") for p in problems)
