"""docs/results.md and README.md's headline table are what bench/out renders (make
results): a figure typed by hand, or a JSON rerun without re-rendering, fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import results
from bench.json_out import stamped


def test_the_committed_page_is_the_render() -> None:
    assert results.PAGE.read_text() == results.render_page(), "run make results"


def test_the_readme_headline_is_the_render() -> None:
    readme = results.README.read_text()
    assert results.render_readme(readme) == readme, "run make results"


def test_the_render_lands_between_the_markers_only(tmp_path: Path) -> None:
    readme = f"intro\n{results.BEGIN}\nold table\n{results.END}\noutro\n"
    rendered = results.render_readme(readme)
    assert rendered.startswith(f"intro\n{results.BEGIN}\n")
    assert rendered.endswith(f"\n{results.END}\noutro\n")
    assert "old table" not in rendered
    assert "| 2wiki-dev |" in rendered
    with pytest.raises(ValueError):
        results.render_readme("no markers here\n")


def _write(out: Path, name: str, data: dict) -> None:
    path = out / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_placeholders_read_the_json_and_round_half_up(tmp_path: Path) -> None:
    _write(tmp_path, "run", {"results": {"default": {"recall@5": 95.25, "mrr": 0.97585}}})
    _write(tmp_path, "sub/size", {"sizes": [{"chunks": 200017, "share": 0.0027}]})
    template = tmp_path / "t.md"
    template.write_text(
        "R@5 {{run:results/default/recall@5}}, MRR {{run:results/default/mrr}}, "
        "{{sub/size:sizes/0/chunks}} chunks, {{sub/size:sizes/0/share|pct}}%, "
        "{{run:results/default/recall@5|0}}"
    )
    page = results.render_page(tmp_path, template)
    assert page == "R@5 95.3, MRR 0.976, 200,017 chunks, 0.3%, 95"


def test_external_figures_come_from_their_own_files(tmp_path: Path) -> None:
    """Published systems' figures from bench/published.json, a bundled dataset's counts
    from its meta.json: never from the prose."""
    published = json.loads(results.REPO.joinpath("bench", "published.json").read_text())
    meta = results.REPO / "bench" / "datasets" / "git-docs" / "meta.json"
    template = tmp_path / "t.md"
    template.write_text(
        "{{published:systems/PropRAG/recall@5/2wiki-dev}} {{dataset/git-docs:counts/questions}}"
    )
    expected = f"{published['systems']['PropRAG']['recall@5']['2wiki-dev']} "
    expected += str(json.loads(meta.read_text())["counts"]["questions"])
    assert results.render_page(tmp_path, template) == expected


def test_a_figure_the_json_lacks_fails_the_render(tmp_path: Path) -> None:
    _write(tmp_path, "run", {"results": {"default": {"recall@5": 95.25}}})
    template = tmp_path / "t.md"
    template.write_text("{{run:results/default/recall@2}}")
    with pytest.raises(KeyError, match="recall@2"):
        results.render_page(tmp_path, template)
    template.write_text("{{missing:results}}")
    with pytest.raises(KeyError, match=r"missing\.json"):
        results.render_page(tmp_path, template)


def test_a_table_names_its_command_commit_and_date() -> None:
    report = {
        "dataset": "2wiki-dev",
        "backend": "embedded",
        "questions": 2,
        "index_seconds": 1.0,
        "results": {"default": {"recall@5": 50.0}},
    }
    old = results.table(report, "eval-2wiki-dev-embedded")
    assert "commit not recorded · date not recorded" in old
    assert "neorag eval ../shared/datasets/2wiki-dev --backend embedded --modes default" in old
    new = results.table({**report, "commit": "abc1234", "date": "2026-12-06"}, "x")
    assert "abc1234 · 2026-12-06" in new


def test_new_results_are_stamped_with_commit_and_date() -> None:
    result = stamped({"figure": 1})
    assert result["figure"] == 1 and result["commit"] and len(result["date"]) == 10
    assert stamped({"commit": "given", "date": "then"})["commit"] == "given"
