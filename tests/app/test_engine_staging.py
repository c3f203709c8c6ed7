"""A long-running engine moves to a newly published index only once it is warm: while the
new version's structures are built (the bridge graph here, held up on purpose), questions
answer from the version the engine had, without waiting; then the engine switches, and the
first question on the new version finds its structures built."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from app.engine import Engine
from app.ingest_service import ingest_once
from app.retrieval import bridge_files, bridge_graph, hop_table
from app.retrieval.hop_table import hop_reads
from app.service import EnginePool, readiness
from app.settings import Settings
from tests.conftest import fresh_collection

pytestmark = pytest.mark.slow

RIVERS = {
    "p0": ("Silverrun", "The Silverrun river flows from Mount Kell into the Amber Sea."),
    "p1": ("Mount Kell", "Mount Kell is the highest peak of the Grey Range, 3,112 metres high."),
    "p2": ("Amber Sea", "The Amber Sea is a shallow inland sea; Port Veldt is its harbour."),
}
HARBOUR = ("Port Veldt", "Port Veldt is a harbour town whose lighthouse was built in 1871.")
QUESTION = "When was the lighthouse of the harbour on the Amber Sea built?"


def write_corpus(folder: Path, passages: dict[str, tuple[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": i, "title": t, "text": x}) for i, (t, x) in passages.items()]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def titles(engine: Engine) -> set[str]:
    result = engine.snapshot().retriever("default").retrieve(QUESTION)
    return {c.title for c in result.context}


def test_a_new_index_is_used_once_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(
        backend="embedded",
        data_dir=tmp_path / "data",
        collection=fresh_collection(),
        retrieval={"refresh_wait_seconds": 0},
    )
    docs = write_corpus(tmp_path / "docs", RIVERS)
    ingest_once(settings, docs)
    engine = Engine(settings)
    try:
        assert "Port Veldt" not in titles(engine)  # the default mode is now in use
        before = engine.version
        write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR})
        ingest_once(settings, docs)

        gate, builds = threading.Event(), []
        real = bridge_graph.make_graph

        def held_build(*args, **kwargs):  # type: ignore[no-untyped-def]
            assert gate.wait(60), "the test never released the build"
            builds.append(threading.current_thread().name)
            return real(*args, **kwargs)

        monkeypatch.setattr(bridge_files, "make_graph", held_build)
        t0 = time.monotonic()
        assert engine.refresh(background=True) is False
        assert engine.version == before
        assert "Port Veldt" not in titles(engine)  # answered from the previous version
        assert time.monotonic() - t0 < 30 and not builds  # ... without waiting for the build

        gate.set()
        engine.wait_staged(60)
        assert engine.version != before
        assert builds == ["index-staging"]  # built once, off the request path
        assert "Port Veldt" in titles(engine)
        assert builds == ["index-staging"]  # the first question found it built
    finally:
        gate.set()
        engine.close()


def test_a_small_index_is_switched_to_before_answering(tmp_path: Path) -> None:
    """Within `refresh_wait_seconds` the caller waits for the new version: a question
    right after an ingest sees what was ingested."""
    settings = Settings(
        backend="embedded", data_dir=tmp_path / "data", collection=fresh_collection()
    )
    docs = write_corpus(tmp_path / "docs", RIVERS)
    ingest_once(settings, docs)
    engine = Engine(settings)
    try:
        assert "Port Veldt" not in titles(engine)
        write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR})
        ingest_once(settings, docs)
        assert engine.refresh(background=True) is True
        assert "Port Veldt" in titles(engine)
    finally:
        engine.close()


def test_a_probe_never_waits_for_a_new_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/readyz` asks the engine pool without waiting (`wait=False`): with the new version's
    build held and `refresh_wait_seconds` long, the probe returns at once and names the
    version still answered from; a question then waits for the switch as before."""
    settings = Settings(
        backend="embedded",
        data_dir=tmp_path / "data",
        collection=fresh_collection(),
        retrieval={"refresh_wait_seconds": 120},
    )
    docs = write_corpus(tmp_path / "docs", RIVERS)
    ingest_once(settings, docs)
    pool = EnginePool()
    gate = threading.Event()
    try:
        before = readiness(pool, settings)["index_version"]
        pool.engine(settings).snapshot().retriever("default").retrieve(QUESTION)
        write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR})
        ingest_once(settings, docs)
        real = bridge_graph.make_graph

        def held_build(*args, **kwargs):  # type: ignore[no-untyped-def]
            assert gate.wait(60), "the test never released the build"
            return real(*args, **kwargs)

        monkeypatch.setattr(bridge_files, "make_graph", held_build)
        t0 = time.monotonic()
        assert readiness(pool, settings)["index_version"] == before
        assert time.monotonic() - t0 < 10  # not the 120 s a question may wait
        gate.set()
        pool.engine(settings).wait_staged(60)
        assert readiness(pool, settings)["index_version"] != before
    finally:
        gate.set()
        pool.close()


@pytest.mark.parametrize("backend", ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_settle_waits_for_the_copies_a_warm_up_started(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On a server, TIGRAG's first question starts copying the token graph and the hop table
    into the process and is answered from the server meanwhile; `settle` returns once both
    copies are in, so what a benchmark times next is the steady state. In process there is
    nothing to copy, and settling loads nothing no mode asked for."""
    collection = (
        request.getfixturevalue("neo4j_store").collection
        if backend == "neo4j"
        else fresh_collection()
    )
    settings = Settings(
        backend=backend,
        data_dir=tmp_path / "data",
        collection=collection,
        algorithms={"token_ppr": "auto"},
    )
    ingest_once(settings, write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR}))
    engine = Engine(settings)
    try:
        engine.retriever("dense").retrieve(QUESTION)
        engine.settle(60)
        assert not any(key[0] == "hop table" for key in engine._derived)  # no hop ran
        engine.retriever("tigrag").retrieve(QUESTION)
        engine.settle(60)
        reads = hop_reads(engine)
        if backend == "neo4j":
            assert reads is not None and reads.ready
            mirror = engine.store.token_mirror
            assert mirror.loaded is not None and mirror.loads == 1
        else:
            assert reads is None
    finally:
        engine.close()


@pytest.mark.neo4j
def test_a_staged_version_does_not_wait_for_its_hop_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """On a server a newly published version is switched to once its token graph is in; its
    hop table (a copy of every chunk's CITES edges and mentions) loads on after the switch,
    hops reading the server meanwhile: the same answer either way."""
    settings = Settings(
        backend="neo4j",
        data_dir=tmp_path / "data",
        collection=request.getfixturevalue("neo4j_store").collection,
        algorithms={"token_ppr": "auto"},
        retrieval={"refresh_wait_seconds": 0},
    )
    docs = write_corpus(tmp_path / "docs", RIVERS)
    ingest_once(settings, docs)
    engine = Engine(settings)
    gate = threading.Event()
    try:
        engine.retriever("tigrag").retrieve(QUESTION)
        engine.settle(60)
        before = engine.version
        write_corpus(tmp_path / "docs", {**RIVERS, "p3": HARBOUR})
        ingest_once(settings, docs)
        real = hop_table.build_hop_table

        def held(*args, **kwargs):  # type: ignore[no-untyped-def]
            assert gate.wait(60), "the test never released the copy"
            return real(*args, **kwargs)

        monkeypatch.setattr(hop_table, "build_hop_table", held)
        engine.refresh(background=True)
        engine.wait_staged(60)
        assert engine.version != before  # switched while the copy is held
        view = engine.snapshot()
        reads = hop_reads(view)
        assert reads is not None and not reads.ready
        from_server = view.retriever("tigrag").retrieve(QUESTION).doc_ranking()
        gate.set()
        assert reads.wait(60)
        assert view.retriever("tigrag").retrieve(QUESTION).doc_ranking() == from_server
    finally:
        gate.set()
        engine.close()
