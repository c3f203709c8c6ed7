"""Shared fixtures. Neo4j-backed tests run against the real server `make test` starts
(NEO4J_URI/NEO4J_PASSWORD in the environment); they are never mocked. Without a server they
fail with a message saying so, unless NEORAG_SKIP_NEO4J=1 opts out explicitly."""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from pydantic import SecretStr

from graph.config import Neo4jConfig

REPO = Path(__file__).resolve().parents[1]


def _find_datasets() -> Path:
    """The shared evaluation datasets: $NEORAG_DATASETS, else ../shared/datasets beside the
    checkout, else the workplace's /work/shared/datasets (CI clones elsewhere)."""
    candidates = [REPO.parent / "shared" / "datasets", Path("/work/shared/datasets")]
    if os.environ.get("NEORAG_DATASETS"):
        candidates.insert(0, Path(os.environ["NEORAG_DATASETS"]))
    return next((p for p in candidates if p.is_dir()), candidates[0])


DATASETS = _find_datasets()


def dataset_file(*parts: str) -> Path:
    """A file of the shared datasets; tests that need one fail (not skip) without it."""
    path = DATASETS.joinpath(*parts)
    if not path.is_file():
        pytest.fail(f"{path} is missing: set NEORAG_DATASETS to the shared datasets folder")
    return path


_neo4j_outcomes: Counter[str] = Counter()


@cache
def shared_models():  # -> ingest.models.IngestModels
    """The default models, loaded once per test process: an in-process ingest that is not
    itself under test should not pay a spaCy and sentence-transformers load."""
    from app.settings import Settings
    from ingest.models import IngestModels

    return IngestModels(Settings().ingest.models)


def neo4j_config_from_env() -> Neo4jConfig:
    if os.environ.get("NEORAG_SKIP_NEO4J") == "1":
        pytest.skip("NEORAG_SKIP_NEO4J=1: Neo4j-backed test skipped")
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.fail(
            "this test needs the real Neo4j + GDS that `make test` starts (NEO4J_URI is not "
            "set); run `make test`, or set NEORAG_SKIP_NEO4J=1 to skip Neo4j-backed tests",
            pytrace=False,
        )
    cfg = Neo4jConfig(
        uri=uri,
        user=os.environ.get("NEO4J_USER", "neo4j"),
        password=SecretStr(os.environ.get("NEO4J_PASSWORD", "")),
        database=os.environ.get("NEO4J_DATABASE", "neo4j"),
    )
    if (cfg.uri, cfg.database) not in _checked_databases:
        require_test_database(cfg)
        _checked_databases.add((cfg.uri, cfg.database))
    return cfg


_checked_databases: set[tuple[str, str]] = set()


def require_test_database(cfg: Neo4jConfig) -> None:
    """Refuse a database holding data the test harness did not create: the harness marks
    the fresh database it starts (`ops/test.sh` → `ops/neo4j/mark_test_db.py`); an empty
    database is marked here. Anything else — a user's server behind an exported NEO4J_URI —
    stops the run with a message, before any test writes."""
    from neo4j import GraphDatabase

    import cypher

    with GraphDatabase.driver(cfg.uri, auth=(cfg.user, cfg.password.get_secret_value())) as d:
        marked = d.execute_query(cypher.load("test_marker_count"), database_=cfg.database)
        if marked.records[0]["markers"] > 0:
            return
        other = d.execute_query(cypher.load("any_node"), database_=cfg.database)
        if other.records:
            pytest.exit(
                f"refusing to run Neo4j-backed tests against {cfg.uri} (database "
                f"{cfg.database!r}): it holds data the test harness did not create. "
                "Run `make test`, which starts a fresh server, or point NEO4J_URI at an empty "
                "scratch database.",
                returncode=4,
            )
        d.execute_query(cypher.load("test_marker_create"), database_=cfg.database)


@pytest.fixture(scope="session")
def neo4j_config() -> Neo4jConfig:
    return neo4j_config_from_env()


def fresh_collection() -> str:
    """A collection no other test (or person) uses."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture()
def neo4j_store(neo4j_config: Neo4jConfig) -> Iterator[object]:
    """A Neo4j store bound to a fresh collection of the marked test database; only that
    collection is cleared afterwards."""
    from graph.neo4j.store import Neo4jStore

    store = Neo4jStore(neo4j_config, fresh_collection())
    try:
        yield store
    finally:
        store.clear()
        store.close()


@pytest.fixture()
def embedded_store(tmp_path: Path) -> Iterator[object]:
    from graph.embedded.store import EmbeddedStore

    store = EmbeddedStore(tmp_path / "graph.sqlite")
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest) -> object:
    """The same test against both backends (the conformance suite)."""
    return request.getfixturevalue(f"{request.param}_store")


LONGEST_FIRST = (
    "tests/test_faults.py",
    "tests/ingest/test_crash.py",
    "tests/ingest/test_parallel.py",
    "tests/ingest/test_incremental_edges.py",
    "tests/test_backend_parity.py",
    "tests/app/test_concurrency.py",
    "tests/app/test_jobs.py",
)
"""The test files that take longest (`PYTEST_ADDOPTS=--durations=60 make test`), run
first: `make test` hands whole files to its processes in collection order, so a long file
collected last would keep one process busy after the others have finished."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if {"neo4j_store", "neo4j_config"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each Neo4j-backed test once: its call outcome, or its setup failure/skip."""
    if "neo4j" not in report.keywords:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _neo4j_outcomes[report.outcome] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    total = sum(_neo4j_outcomes.values())
    line = ", ".join(f"{n} {k}" for k, n in sorted(_neo4j_outcomes.items())) or "none collected"
    terminalreporter.write_sep("=", f"Neo4j-backed tests: {total} ({line})")
    summary = os.environ.get("NEORAG_TEST_SUMMARY")
    if summary and not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller counts all
        add_to_summary(Path(summary), _neo4j_outcomes)


def add_to_summary(path: Path, outcomes: Counter[str]) -> None:
    """ops/test.sh runs pytest more than once (the parallel part, then the exclusive one)
    and prints the sum last: each run adds its counts to the file."""
    total: Counter[str] = Counter(json.loads(path.read_text()) if path.exists() else {})
    total.update(outcomes)
    path.write_text(json.dumps(dict(total)))


def summary_line(path: Path) -> str:
    """`Neo4j-backed tests: N (k passed, …)` from the counts `add_to_summary` kept."""
    counts: dict[str, int] = json.loads(path.read_text()) if path.exists() else {}
    line = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none collected"
    return f"Neo4j-backed tests: {sum(counts.values())} ({line})"
