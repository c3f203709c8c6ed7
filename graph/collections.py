"""Collection names: independent corpora kept side by side in one backend.

A collection's name appears in file paths (the embedded backend keeps one store per
collection), in GDS graph names and in every document id, so it is restricted to a safe
alphabet. Every store is bound to exactly one collection.
"""

from __future__ import annotations

import re

COLLECTION_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_COLLECTION = re.compile(COLLECTION_PATTERN)
DEFAULT_COLLECTION = "default"


class InvalidCollection(ValueError):
    pass


def is_collection_name(name: object) -> bool:
    return isinstance(name, str) and _COLLECTION.fullmatch(name) is not None  # `$` allows "\n"


def check_collection(name: str) -> str:
    """The name itself, if it can name a collection: 1–64 of a-z, 0-9, `_`, `-`, starting
    with a letter or digit."""
    if not is_collection_name(name):
        raise InvalidCollection(
            f"invalid collection name {name!r}: use 1-64 characters a-z, 0-9, '_' or '-', "
            "starting with a letter or digit"
        )
    return name
