"""Errors a person can act on. Each message is one line and names the fix; none ever
contains a credential."""

from __future__ import annotations


class NeoragError(Exception):
    """Base for errors shown to users as a one-line message instead of a traceback."""


class BackendUnavailable(NeoragError):
    pass


class BackendAuthError(NeoragError):
    pass


class GdsMissing(NeoragError):
    pass


class EmptyIndex(NeoragError):
    pass


class CypherNotSupported(NeoragError):
    pass


class WriteRefused(NeoragError):
    pass


class LegacyStore(NeoragError):
    """The backend holds an index written by an older neorag (document ids without
    collections); it is never mixed with a collection, only replaced by `--rebuild`."""


class UnknownCollection(NeoragError):
    """A collection that does not exist was asked for (to query, list or delete)."""


class LockedError(NeoragError):
    """Another writer holds the collection (a file lock in the data dir, or the lock held
    in the Neo4j database); the caller may try again later."""


class StoreFull(NeoragError):
    """A write failed for lack of space; the transaction was rolled back whole."""


class StatementRefused(WriteRefused):
    """Ad-hoc Cypher that read-only mode does not run (app/cypher_guard.py): the message
    names what was refused."""


class StatementTimeout(NeoragError):
    """Ad-hoc Cypher that did not finish within its timeout (the server stopped it)."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class ParameterMissing(NeoragError):
    """Ad-hoc Cypher that uses a `$name` no parameter was given for."""
