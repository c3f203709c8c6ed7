"""Document identity and collections, on both backends, through the app's own paths.

The collisions people hit before collections existed are reproduced here: two corpus files
numbering their passages p0, p1, … in one store; `a/notes.md` and `b/notes.md` ingested
from two roots; the same file name uploaded twice. Collections keep corpora apart: a query
in one never returns another's chunk, and deleting or rebuilding one leaves the other's
counts and content hashes exactly as they were. `neorag eval` indexes into a collection of
its own and touches nothing else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.collections import delete_collection, list_collections
from app.engine import Engine
from app.eval.harness import Dataset, eval_collection, run_eval
from app.ingest_service import delete_documents, ingest_once
from app.services import open_store
from app.settings import Settings
from app.uploads import save_upload
from graph.errors import NeoragError, UnknownCollection
from tests.conftest import fresh_collection
from tests.ids import names

pytestmark = pytest.mark.slow
MARK, HIDDEN = "NeoragTestMarker", "HiddenNeoragTestMarker"


def corpus(folder: Path, passages: dict[str, tuple[str, str]]) -> Path:
    """A corpus.jsonl of {id: (title, text)}."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    lines = [json.dumps({"id": i, "title": t, "text": x}) for i, (t, x) in passages.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


RIVERS = {
    "p0": ("Silverrun", "The Silverrun river flows from Mount Kell into the Amber Sea."),
    "p1": ("Mount Kell", "Mount Kell is the highest peak of the Grey Range, 3,112 metres high."),
    "p2": ("Amber Sea", "The Amber Sea is a shallow inland sea; Port Veldt is its harbour."),
}
BIRDS = {
    "p0": ("Grey heron", "The grey heron nests in colonies in tall trees near water."),
    "p1": ("Kingfisher", "The kingfisher dives for small fish from a perch above streams."),
}


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "neo4j":
        request.getfixturevalue("neo4j_config")  # the marked test database, or a clear stop
    return request.param


@pytest.fixture()
def settings(backend: str, tmp_path: Path) -> Settings:
    """Settings bound to a fresh collection. Afterwards the collections the test made are
    deleted: every one named after its fresh collection (`<it>-birds`, `eval-<it>-set`),
    never another worker's, which on Neo4j shares the database."""
    base = Settings(backend=backend, data_dir=tmp_path / "data")
    made = base.for_collection(fresh_collection())
    yield made
    for info in list_collections(base):
        if made.collection in info.name:
            delete_collection(base.for_collection(info.name))


def state(settings: Settings) -> tuple[dict[str, str], int, int]:
    """(document id → content hash, chunk count, token count) of a collection."""
    with open_store(settings) as store:
        docs = {d: r.content_hash for d, r in store.documents().items()}
        status = store.status()
    return docs, status.chunks, status.tokens


def test_two_corpus_files_with_the_same_passage_ids_both_stay(
    settings: Settings, tmp_path: Path
) -> None:
    rivers = corpus(tmp_path / "rivers", RIVERS)
    birds = corpus(tmp_path / "birds", BIRDS)
    ingest_once(settings, rivers.parent)
    before, _, _ = state(settings)
    report = ingest_once(settings, birds.parent)
    assert len(report.new) == 2 and report.changed == [] and report.removed == []
    after, _, _ = state(settings)
    assert len(after) == 5
    assert {d: h for d, h in after.items() if d in before} == before, "rivers untouched"
    assert sorted(names(after)) == ["p0", "p0", "p1", "p1", "p2"]


def test_same_relative_path_under_two_roots(settings: Settings, tmp_path: Path) -> None:
    for root, text in (("a", "Alpha notes about the Silverrun."), ("b", "Beta notes on herons.")):
        (tmp_path / root).mkdir()
        (tmp_path / root / "notes.md").write_text(f"# Notes\n\n{text}\n", encoding="utf-8")
    ingest_once(settings, tmp_path / "a")
    ingest_once(settings, tmp_path / "b")
    docs, _, _ = state(settings)
    assert sorted(Path(d.split(":", 1)[1]).parent.name for d in docs) == ["a", "b"]

    # re-ingesting a root changes only that root's documents
    (tmp_path / "a" / "notes.md").unlink()
    (tmp_path / "a" / "other.md").write_text("# Other\n\nSomething else.\n", encoding="utf-8")
    report = ingest_once(settings, tmp_path / "a")
    assert [Path(d).name for d in report.removed] == ["notes.md"]
    assert [Path(d).name for d in report.new] == ["other.md"]
    after, _, _ = state(settings)
    b_doc = next(d for d in docs if "/b/" in d)
    assert after[b_doc] == docs[b_doc]


def test_same_named_uploads_are_two_documents(settings: Settings) -> None:
    bounded = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"allowed_roots": []})}
    )
    save_upload(bounded, "report.md", b"# Report\n\nThe first report covers rivers.\n")
    ingest_once(bounded, bounded.uploads_dir, bounded=True)
    save_upload(bounded, "report.md", b"# Report\n\nThe second report covers birds.\n")
    report = ingest_once(bounded, bounded.uploads_dir, bounded=True)
    assert len(report.new) == 1 and report.changed == [] and report.removed == []
    docs, _, _ = state(bounded)
    assert len(docs) == 2 and all(d.endswith("/report.md") for d in docs)


def test_collections_keep_corpora_apart(backend: str, settings: Settings, tmp_path: Path) -> None:
    rivers = settings
    birds = settings.for_collection(f"{settings.collection}-birds")
    ingest_once(rivers, corpus(tmp_path / "rivers", RIVERS).parent)
    ingest_once(birds, corpus(tmp_path / "birds", BIRDS).parent)
    kept = state(rivers)

    with open_store(rivers) as store:
        river_chunk = store.chunk_ids()[0]
    engine = Engine(birds)
    try:
        for mode in ("default", "tigrag", "spectrag", "literag", "hybrid"):
            result = engine.retriever(mode).retrieve("Which river flows into the Amber Sea?")
            ids = [s.chunk_id for s in result.ranking] + [c.id for c in result.context]
            assert ids and all(c.startswith(f"{birds.collection}:") for c in ids), mode
        assert engine.store.get_chunks([river_chunk]) == [], "no chunk of another collection"
    finally:
        engine.close()

    listed = {c.name: c for c in list_collections(settings)}
    assert listed[rivers.collection].documents == 3 and listed[birds.collection].documents == 2

    ingest_once(birds, tmp_path / "birds", rebuild=True)  # rebuilding one …
    assert state(rivers) == kept
    delete_collection(birds)  # … or deleting it leaves the other exactly as it was
    assert state(rivers) == kept
    assert birds.collection not in {c.name for c in list_collections(settings)}
    with pytest.raises(UnknownCollection, match=birds.collection):
        open_store(birds)


def test_delete_named_documents_only(settings: Settings, tmp_path: Path) -> None:
    ingest_once(settings, corpus(tmp_path / "rivers", RIVERS).parent)
    docs, _, _ = state(settings)
    gone = next(d for d in docs if d.endswith("#p1"))
    with pytest.raises(NeoragError, match="no document"):
        delete_documents(settings, [f"{settings.collection}:nope"])
    assert state(settings)[0] == docs, "a typo deletes nothing"
    report = delete_documents(settings, [gone])
    assert report.removed == [gone]
    after, _, _ = state(settings)
    assert after == {d: h for d, h in docs.items() if d != gone}
    engine = Engine(settings)
    try:
        ranking = engine.retriever("hybrid").retrieve("How high is Mount Kell?").doc_ranking()
        assert gone not in ranking
    finally:
        engine.close()


def test_eval_touches_only_its_own_collection(settings: Settings, tmp_path: Path) -> None:
    ingest_once(settings, corpus(tmp_path / "rivers", RIVERS).parent)
    kept = state(settings)
    data = tmp_path / f"{settings.collection}-set"
    corpus(data, BIRDS)
    question = {"id": "q1", "question": "What does the kingfisher eat?", "answers": ["fish"]}
    (data / "questions.jsonl").write_text(json.dumps({**question, "gold_ids": ["p1"]}) + "\n")
    dataset = Dataset.load(data)
    report = run_eval(settings, dataset, ["hybrid"])
    named = eval_collection(settings, dataset)
    assert report["collection"] == named == f"eval-{settings.collection}-set"
    assert report["results"]["hybrid"]["recall@2"] == 100.0
    assert state(settings) == kept


def test_cli_collections_delete_and_unknown_names(settings: Settings, tmp_path: Path) -> None:
    env = {
        "NEORAG_BACKEND": settings.backend,
        "NEORAG_DATA_DIR": str(settings.data_dir),
        "NEORAG_COLLECTION": settings.collection,
    }
    runner = CliRunner()
    rivers = corpus(tmp_path / "rivers", RIVERS)
    assert runner.invoke(app, ["ingest", str(rivers.parent), "--json"], env=env).exit_code == 0
    listed = runner.invoke(app, ["collections", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows[settings.collection]["documents"] == 3

    docs = runner.invoke(app, ["documents", "--json"], env=env)
    first = json.loads(docs.stdout)[0]["id"]
    gone = runner.invoke(app, ["delete", first, "--json"], env=env)
    assert gone.exit_code == 0, gone.output
    assert json.loads(gone.stdout)["removed"] == [first]

    other = {**env, "NEORAG_COLLECTION": "default"}
    missing = runner.invoke(app, ["status", "--collection", "no-such-thing"], env=other)
    assert missing.exit_code == 2 and "no collection 'no-such-thing'" in missing.output
    bad = runner.invoke(app, ["status", "--collection", "Bad Name"], env=other)
    assert bad.exit_code == 2 and "invalid setting NEORAG_COLLECTION" in bad.output
    refused = runner.invoke(app, ["delete", "--collection", settings.collection], env=env)
    assert refused.exit_code == 2 and "--yes" in refused.output  # not a terminal: no guess
    whole = runner.invoke(app, ["delete", "--collection", settings.collection, "--yes"], env=env)
    assert whole.exit_code == 0, whole.output
    assert settings.collection not in {c.name for c in list_collections(settings)}


def test_stores_of_an_older_version_are_detected(backend: str, tmp_path: Path) -> None:
    settings = Settings(backend=backend, data_dir=tmp_path / "data")
    if backend == "embedded":
        legacy = settings.data_dir / "embedded" / "graph.sqlite"
        legacy.parent.mkdir(parents=True)
        legacy.write_bytes(b"")
        undo = None
    else:
        from neo4j import GraphDatabase

        cfg = settings.neo4j
        auth = (cfg.user, cfg.password.get_secret_value())
        driver = GraphDatabase.driver(cfg.uri, auth=auth)
        driver.execute_query("CREATE (:Document {id: 'p0', source: 'old'})")
        undo = driver
    try:
        with pytest.raises(NeoragError, match=r"older neorag.*--rebuild"):
            open_store(settings)
        docs = tmp_path / "docs"
        corpus(docs, BIRDS)
        report = ingest_once(settings, docs, rebuild=True)
        assert len(report.new) == 2
        with open_store(settings) as store:  # the old index is gone, the new one opens
            assert store.status().documents == 2
        if backend == "embedded":
            assert not legacy.exists()
    finally:
        if undo is not None:
            undo.execute_query("MATCH (d:Document) WHERE d.collection IS NULL DELETE d")
            undo.close()
        delete_collection(settings)


def test_the_neo4j_fixture_refuses_a_database_it_did_not_create(neo4j_config) -> None:
    from neo4j import GraphDatabase

    from tests.conftest import require_test_database

    auth = (neo4j_config.user, neo4j_config.password.get_secret_value())
    with GraphDatabase.driver(neo4j_config.uri, auth=auth) as driver:
        driver.execute_query("CREATE (:SomeonesData {name: 'keep me'})")
        driver.execute_query(f"MATCH (m:{MARK}) SET m:{HIDDEN} REMOVE m:{MARK}")
        try:
            with pytest.raises(pytest.exit.Exception, match="data the test harness did not"):
                require_test_database(neo4j_config)
            kept = driver.execute_query("MATCH (n:SomeonesData) RETURN count(n) AS n").records
            assert kept[0]["n"] == 1
        finally:
            driver.execute_query(f"MATCH (m:{HIDDEN}) SET m:{MARK} REMOVE m:{HIDDEN}")
            driver.execute_query("MATCH (n:SomeonesData) DELETE n")
    assert os.environ.get("NEO4J_URI")
