"""Every `neorag` command's human-readable output (not `--json`), on a real store of each
backend: its normal path exits 0 with the text a person reads, its error paths exit with
one `error:` line, and nothing ever shows a traceback.

One small corpus per backend for the whole module (ingested in process with the session's
shared models); the commands themselves run through typer's CliRunner, as a person's shell
would run them, reading their settings from the environment. `serve`, `api` and `mcp` are
servers, not reports: their start-up is tested where they are driven (test_cypher_command,
tests/app/api, test_mcp_server).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from app.cli import app
from app.collections import delete_collection, list_collections
from app.ingest_service import collection_writer
from app.runlog import record_run
from app.services import index_dir
from app.settings import Settings
from ingest.runner import run_ingest
from tests.conftest import fresh_collection, shared_models

pytestmark = pytest.mark.slow

PAGES = {
    "silverrun.md": (
        "# Silverrun\n\nThe Silverrun river flows from Mount Kell into the Amber Sea. "
        "Its valley is farmed by the people of Port Veldt.\n"
    ),
    "kell.md": (
        "# Mount Kell\n\nMount Kell is the highest peak of the Grey Range, 3,112 metres "
        "high. The Silverrun rises on its northern slope.\n"
    ),
    "amber.md": (
        "# Amber Sea\n\nThe Amber Sea is a shallow inland sea. Port Veldt is its harbour, "
        "and the Silverrun is the largest river that reaches it.\n"
    ),
}
SPARE = {
    "heron.md": "# Grey heron\n\nThe grey heron nests in colonies in tall trees near water.\n",
    "kingfisher.md": "# Kingfisher\n\nThe kingfisher dives for fish from a perch.\n",
}
QUESTION = "Which river flows into the Amber Sea?"


@dataclass(frozen=True)
class Store:
    """A backend's module-wide store: `collection` holds PAGES (read by every test),
    `spare` holds SPARE (the delete test's to destroy)."""

    backend: str
    data_dir: Path
    corpus: Path
    collection: str
    spare: str
    spare_corpus: Path

    def env(self, collection: str | None = None) -> dict[str, str]:
        return {
            "NEORAG_BACKEND": self.backend,
            "NEORAG_DATA_DIR": str(self.data_dir),
            "NEORAG_COLLECTION": collection or self.collection,
        }


def write_pages(folder: Path, pages: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def ingest_in_process(settings: Settings, root: Path) -> None:
    """The locked, logged ingest the CLI runs, with the session's models."""
    with collection_writer(settings) as store:
        report = run_ingest(
            root,
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
            models=shared_models(),
        )
    assert report.ok and len(report.new) == len(list(root.iterdir())), report
    record_run(settings, report)


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    if request.param == "neo4j":
        request.getfixturevalue("neo4j_config")  # the marked test database, or a clear stop
    tmp = tmp_path_factory.mktemp(f"cli-{request.param}")
    made = Store(
        request.param,
        tmp / "data",
        write_pages(tmp / "rivers", PAGES),
        fresh_collection(),
        fresh_collection(),
        write_pages(tmp / "birds", SPARE),
    )
    base = Settings(backend=made.backend, data_dir=made.data_dir)
    ingest_in_process(base.for_collection(made.collection), made.corpus)
    ingest_in_process(base.for_collection(made.spare), made.spare_corpus)
    yield made
    for info in list_collections(base):
        if made.collection in info.name or info.name == made.spare:
            delete_collection(base.for_collection(info.name))


def neorag(env: dict[str, str], *args: str, code: int = 0, stdin: str | None = None) -> Result:
    """Run one command; it must end with `code` and no exception or traceback."""
    result = CliRunner().invoke(app, list(args), env=env, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(result.exception))
        pytest.fail(f"neorag {' '.join(args)} raised:\n{trace}")
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == code, f"neorag {' '.join(args)}: {result.output}"
    return result


def one_error(result: Result, *words: str) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_status(store: Store) -> None:
    out = neorag(store.env(), "status").stdout
    assert f"neorag status ({store.backend}, collection {store.collection})" in out
    for row in ("documents", "chunks", "tokens", "communities", "analytics", "edges"):
        assert row in out, row
    assert "fresh (full pass on the current graph)" in out
    assert "last ingest:" in out and "new 3" in out and str(store.corpus.resolve()) in out


def test_documents_and_collections(store: Store) -> None:
    result = neorag(store.env(), "documents")
    rows = [line.split(maxsplit=1) for line in result.stdout.splitlines()]  # id, title
    assert sorted(title for _, title in rows) == ["Amber Sea", "Mount Kell", "Silverrun"]
    assert all(doc_id.startswith(f"{store.collection}:") for doc_id, _ in rows)
    assert f"3 documents in collection {store.collection!r}" in result.stderr

    listed = neorag(store.env(), "collections").stdout
    assert f"collections ({store.backend})" in listed
    assert store.collection in listed and store.spare in listed


def test_ask(store: Store) -> None:
    out = neorag(store.env(), "ask", QUESTION).stdout
    assert "citations" in out and "Silverrun" in out
    assert "trace: mode default" in out
    tigrag = neorag(store.env(), "ask", QUESTION, "--mode", "tigrag", "--top-k", "2").stdout
    assert "trace: mode tigrag" in tigrag


def test_ingest_again_reports_unchanged(store: Store) -> None:
    """A re-ingest of the stored corpus: the human report with nothing to redo."""
    out = neorag(store.env(), "ingest", str(store.corpus)).stdout
    assert "documents" in out and "graph" in out and "seconds per" in out
    assert "chunks" in out and "communities" in out
    lines = out.splitlines()
    values = lines[next(n for n, line in enumerate(lines) if "unchanged" in line) + 2]
    new, changed, removed, unchanged, skipped = (v.strip() for v in values.split("│")[1:6])
    assert (new, changed, removed, unchanged, skipped) == ("0", "0", "0", "3", "0")


def test_analytics(store: Store) -> None:
    result = neorag(store.env(), "analytics")
    assert result.stdout.startswith("analytics: ") and "communities, modularity" in result.stdout
    assert "fresh" in neorag(store.env(), "status").stdout


def test_delete_documents_then_the_collection(store: Store) -> None:
    env = store.env(store.spare)
    heron = next(
        line.split(maxsplit=1)[0]
        for line in neorag(env, "documents").stdout.splitlines()
        if "Grey heron" in line
    )
    out = neorag(env, "delete", heron).stdout
    assert f"deleted {heron}" in out and f"chunks left in collection {store.spare!r}" in out
    assert "Grey heron" not in neorag(env, "documents").stdout

    one_error(neorag(env, "delete", "--collection", store.spare, code=2), "confirm with --yes")
    out = neorag(env, "delete", "--collection", store.spare, "--yes").stdout
    assert f"deleted collection {store.spare!r} (1 documents" in out
    assert store.spare not in neorag(store.env(), "collections").stdout


def test_eval(store: Store, tmp_path: Path) -> None:
    data = tmp_path / f"{store.collection}-set"  # eval-<it>-set: deleted with the store
    data.mkdir()
    records = [{"id": name, "title": t.splitlines()[0][2:], "text": t} for name, t in PAGES.items()]
    (data / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    question = {"id": "q1", "question": QUESTION, "answers": ["Silverrun"]}
    (data / "questions.jsonl").write_text(json.dumps({**question, "gold_ids": ["amber.md"]}))
    env = store.env()
    out = neorag(env, "eval", str(data), "--modes", "default", "--backend", store.backend).stdout
    assert "| default |" in out and "recall@2" in out.lower()


def test_cypher(store: Store) -> None:
    env = store.env()
    if store.backend == "embedded":
        one_error(neorag(env, "cypher", "RETURN 1", code=2), "Neo4j backend")
        return
    out = neorag(env, "cypher", "RETURN 41 + 1 AS answer").stdout
    assert "answer" in out and "42" in out
    one_error(neorag(env, "cypher", "CREATE (:NeoragCliProbe)", code=2), "--write")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("ask", "   "), ("question is empty",)),
        (("ask", QUESTION, "--mode", "nonsense"), ("unknown mode", "default")),
        (("delete", "no-such-doc"), ("no document", "neorag documents")),
        (("ingest", "/no/such/folder"), ("does not exist",)),
        (("eval", "/no/such/dataset"), ("needs corpus.jsonl",)),
    ],
    ids=["empty-question", "unknown-mode", "unknown-document", "missing-path", "missing-dataset"],
)
def test_error_paths_are_one_line(store: Store, args: tuple[str, ...], words: tuple[str]) -> None:
    one_error(neorag(store.env(), *args, code=2), *words)


@pytest.mark.parametrize("command", ["status", "documents", "analytics", "ask"])
def test_unknown_collection_is_one_line(store: Store, command: str) -> None:
    question = [QUESTION] if command == "ask" else []
    args = [command, "--collection", "no-such-collection", *question]
    one_error(neorag(store.env(), *args, code=2), "no-such-collection")
