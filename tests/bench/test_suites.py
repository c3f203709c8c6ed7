"""bench/ is one tool of named suites (`python -m bench SUITE`): every suite loads and
explains itself, ablations are parameters of the recall suite, and bench/out holds one
JSON per suite × dataset × backend with no dated copies. No model loads, nothing runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.suites import SUITES, answers, recall

BENCH = Path(__file__).resolve().parents[2] / "bench"
HELPERS = {
    "__main__.py",
    "figures.py",
    "json_out.py",
    "results.py",
    "sections_docs.py",
    "sections_scale.py",
    "scale_corpus.py",
    "sections.py",
    "serving.py",
    "vector_cache.py",
}


def test_bench_is_suites_and_shared_helpers() -> None:
    assert len(SUITES) <= 12
    assert {p.name for p in BENCH.glob("*.py")} == HELPERS
    modules = {p.stem for p in (BENCH / "suites").glob("*.py")} - {"__init__"}
    assert modules == {target.rsplit(".", 1)[1] for target, _ in SUITES.values()}


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_suite_explains_itself(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert f"python -m bench {name}" in capsys.readouterr().out


def test_an_unknown_suite_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-suite"]) == 2
    assert "recall" in capsys.readouterr().err


def _registry() -> dict[str, dict]:
    return json.loads((BENCH / "ablations.json").read_text())["ablations"]


@pytest.mark.parametrize("name", sorted(n for n, s in _registry().items() if "retired" not in s))
def test_an_ablation_is_the_recall_suite_with_its_settings(name: str) -> None:
    spec = _registry()[name]
    runs = recall.ablation_runs(name)
    assert len(runs) == len(spec["datasets"])
    for run in runs:
        command = run.command()
        assert all(f"{key}=" in command for key in spec.get("env", {}))
        assert " ".join(spec.get("args", [])) in command
        assert f"--modes {spec['modes']} " in command
        assert run.out.is_file(), f"{run.out.name}: the ablation's committed result"


def test_a_retired_ablation_does_not_run() -> None:
    retired = [n for n, s in _registry().items() if "retired" in s]
    assert retired
    with pytest.raises(SystemExit, match="retired"):
        recall.ablation_runs(retired[0])


def test_the_recall_and_answers_suites_write_one_file_per_set_and_backend() -> None:
    args = recall.parser().parse_args([])
    outs = [run.out.name for run in recall.plan(args)]
    sets = [*recall.SHARED, *recall.DOCS]
    assert outs == [f"eval-{ds}-{b}.json" for b in ("embedded", "neo4j") for ds in sets]
    held = [run.out.name for run in answers.plan(sets, held_out=True)]
    assert held[-2:] == [
        f"answer-{ds}-embedded-first100.json" for ds in answers.FITTED_ON_FIRST_100
    ]
    command = recall.plan(args)[0].command()
    assert command.startswith("neorag eval ../shared/datasets/2wiki-dev --backend embedded")


def test_bench_out_has_no_dated_copies() -> None:
    out = BENCH / "out"
    dated = re.compile(r"-(\d{4}-\d{2}-\d{2}[a-z]?|[0-9a-f]{7})(-first100)?\.json$")
    assert [p.name for p in out.rglob("*.json") if dated.search(p.name)] == []
    findings = json.loads((BENCH / "findings.json").read_text())["files"]
    assert {p.stem for p in (out / "findings").glob("*.json")} == set(findings)


def test_a_halved_docs_set_runs_its_development_half_unless_held_out_is_asked() -> None:
    from bench.suites import docs

    dev = docs.eval_run("postgres-docs", "embedded", BENCH / "out", held_out=False)
    held = docs.eval_run("postgres-docs", "embedded", BENCH / "out", held_out=True)
    assert dev.out.name == "eval-postgres-docs-dev-embedded.json" and "--half even" in dev.command()
    assert held.out.name == "eval-postgres-docs-held-out-embedded.json"
    assert "--half odd" in held.command()
    whole = docs.eval_run("git-docs", "embedded", BENCH / "out", held_out=True)
    assert whole.out.name == "eval-git-docs-embedded.json" and "--half" not in whole.command()
    assert all("--per-question" in run.command() for run in (dev, held, whole))
