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
