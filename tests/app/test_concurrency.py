"""Scheduled and concurrent use: two ingests never overlap, and queries during a re-ingest
never error and never return chunks of a half-written document (the re-ingest and the
scheduled loop are real processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout
from typer.testing import CliRunner

from app.cli import app
from app.engine import Engine
from app.ingest_command import ingest_lock, ingest_once, parse_interval
from app.settings import Settings
from graph.errors import NeoragError

pytestmark = pytest.mark.slow
DOCS = 40
SECTIONS = 3


def write_version(root: Path, version: str) -> Path:
    """DOCS Markdown documents of SECTIONS sections; every section says its version, so a
    document mixing versions would show in any chunk set."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(DOCS):
        body = [f"# Station {i}\n"]
        for s in range(SECTIONS):
            body.append(
                f"## Part {s}\n\nStation {i} part {s} runs the {version} timetable. "
                f"The {version} schedule of station {i} lists platform {s} departures.\n"
            )
        (root / f"station{i:02d}.md").write_text("\n".join(body), encoding="utf-8")
    return root


def cli(args: list[str], env: dict[str, str], **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def env_for(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEORAG_BACKEND=settings.backend,
        NEORAG_DATA_DIR=str(settings.data_dir),
        NEORAG_COLLECTION=settings.collection,
        NEORAG_INGEST__BATCH_DOCUMENTS="4",
    )
    return env


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "neo4j":  # a fresh collection of the real, marked test database
        store = request.getfixturevalue("neo4j_store")
        return Settings(backend="neo4j", data_dir=tmp_path / "data", collection=store.collection)
    return Settings(backend=request.param, data_dir=tmp_path / "data")


def test_queries_during_a_reingest_see_whole_documents(settings: Settings, tmp_path: Path) -> None:
    """A re-ingest in another process rewrites every document while this one queries; a
    second ingest started meanwhile exits with a message (the two never overlap)."""
    docs = write_version(tmp_path / "docs", "spring")
    env = env_for(settings)
    ingest_once(settings, docs)  # the first version, in this process

    engine = Engine(settings)
    retriever_modes = ["tigrag", "hybrid", "spectrag"]
    write_version(docs, "autumn")  # every document changes
    reingest = cli(["ingest", str(docs), "--json"], env)
    lock = ingest_lock(settings)
    seen_versions: set[str] = set()
    queries = 0
    second = None
    try:
        while reingest.poll() is None or queries < 5:
            if second is None and reingest.poll() is None:
                try:
                    lock.acquire(timeout=0)
                    lock.release()
                except Timeout:  # the re-ingest holds it: a second ingest meets it
                    second = CliRunner().invoke(app, ["ingest", str(docs)], env=env)
            engine.refresh()
            mode = retriever_modes[queries % len(retriever_modes)]
            result = engine.retriever(mode).retrieve("Which timetable does station 7 run?")
            queries += 1
            by_doc: dict[str, set[str]] = {}
            for chunk in result.context:
                version = "autumn" if "autumn" in chunk.text else "spring"
                by_doc.setdefault(chunk.doc_id, set()).add(version)
                seen_versions.add(version)
            mixed = {d: v for d, v in by_doc.items() if len(v) > 1}
            assert not mixed, f"half-written documents in a result: {mixed}"
            if reingest.poll() is not None and queries >= 5:
                break
    finally:
        out, err = reingest.communicate(timeout=600)
    assert reingest.returncode == 0, err[-2000:]
    assert json.loads(out)["documents"]["changed"] == DOCS
    assert second is not None, "the re-ingest was never seen holding the lock"
    assert second.exit_code == 3, second.output
    assert "another ingest" in second.output
    assert second.exception is None or isinstance(second.exception, SystemExit)
    assert queries >= 5
    engine.refresh()
    final = engine.retriever("tigrag").retrieve("Which timetable does station 7 run?")
    assert final.context and all("autumn" in c.text for c in final.context)
    assert "spring" in seen_versions or "autumn" in seen_versions
    engine.close()


def test_interval_parsing() -> None:
    assert parse_interval("15m") == 900 and parse_interval("30s") == 30
    assert parse_interval("1h") == 3600 and parse_interval("2") == 2
    with pytest.raises(NeoragError):
        parse_interval("soon")


def test_every_runs_again_and_logs(tmp_path: Path) -> None:
    docs = write_version(tmp_path / "docs", "spring")
    settings = Settings(backend="embedded", data_dir=tmp_path / "data")
    env = env_for(settings)
    loop = cli(["ingest", str(docs), "--every", "2s"], env)
    try:
        deadline = time.monotonic() + 300
        runs: list[dict] = []
        while time.monotonic() < deadline and len(runs) < 2:
            time.sleep(1)
            status = CliRunner().invoke(app, ["status", "--json"], env=env)
            if status.exit_code == 0:
                runs = json.loads(status.stdout)["runs"]
    finally:
        loop.terminate()
        loop.wait(timeout=60)
    assert len(runs) >= 2, runs
    assert runs[0]["new"] == DOCS and runs[1]["unchanged"] == DOCS and runs[1]["new"] == 0


def test_lock_is_per_store(tmp_path: Path) -> None:
    a = ingest_lock(Settings(backend="embedded", data_dir=tmp_path / "a"))
    b = ingest_lock(Settings(backend="embedded", data_dir=tmp_path / "b"))
    with a, b:
        other = FileLock(a.lock_file)
        with pytest.raises(Timeout):
            other.acquire(timeout=0)
