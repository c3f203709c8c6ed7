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
