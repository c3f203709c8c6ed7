"""Batched deletes (`CALL … IN TRANSACTIONS`) run as auto-commit transactions, which the
driver does not retry. A deadlock with another collection's writer is transient: clearing a
collection retries it and ends with the collection gone; an error that is not transient is
raised at once. The server is real; only the first statement's failure is injected."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j.exceptions import Neo4jError

from graph.errors import NeoragError
from tests.graph.test_conformance import CORPUS, add

pytestmark = pytest.mark.exclusive  # the conformance ids are unique in the database


class _FailingFirstRun:
    """The real driver, except that the first auto-commit `session.run` raises `error`."""

    def __init__(self, driver: Any, error: Neo4jError) -> None:
        self._driver, self._error, self.failures = driver, error, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def session(self, **kwargs: Any) -> Any:
        outer, session = self, self._driver.session(**kwargs)

        class _Session:
            def __enter__(self) -> Any:
                session.__enter__()
                return self

            def __exit__(self, *exc: Any) -> Any:
                return session.__exit__(*exc)

            def run(self, *args: Any, **kw: Any) -> Any:
                if outer.failures == 0:
                    outer.failures += 1
                    raise outer._error
                return session.run(*args, **kw)

        return _Session()


def _error(code: str) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message="injected")


def test_a_deadlocked_clear_is_retried_until_the_collection_is_gone(neo4j_store) -> None:
    add(neo4j_store, CORPUS)
    assert neo4j_store.documents()
    real = neo4j_store.driver
    neo4j_store.driver = _FailingFirstRun(
        real, _error("Neo.TransientError.Transaction.DeadlockDetected")
    )
    try:
        neo4j_store.clear()
        assert neo4j_store.driver.failures == 1
    finally:
        neo4j_store.driver = real
    assert neo4j_store.documents() == {}
    assert neo4j_store.read("chunk_count")[0]["chunks"] == 0


def test_an_error_that_is_not_transient_is_raised_at_once(neo4j_store) -> None:
    add(neo4j_store, CORPUS)
    real = neo4j_store.driver
    neo4j_store.driver = _FailingFirstRun(real, _error("Neo.ClientError.Statement.SyntaxError"))
    try:
        with pytest.raises(NeoragError, match="SyntaxError"):
            neo4j_store.clear()
    finally:
        neo4j_store.driver = real
    assert neo4j_store.documents(), "nothing was deleted"
