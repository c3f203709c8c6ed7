"""Collection names: 1–64 of a-z, 0-9, `_`, `-`, starting with a letter or digit (they name
folders, GDS projections and a node property, so nothing else may pass)."""

from __future__ import annotations

import pytest

from graph.collections import InvalidCollection, check_collection


@pytest.mark.parametrize("name", ["a", "default", "eval-2wiki-dev", "x_1", "9lives", "a" * 64])
def test_valid_names_pass_unchanged(name: str) -> None:
    assert check_collection(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "a" * 65, "Bad", "bad name", "-lead", "_lead", "a.b", "a/b", "../x", "é", "a\n"],
)
def test_invalid_names_are_refused_with_the_rule(name: str) -> None:
    with pytest.raises(InvalidCollection, match="1-64 characters"):
        check_collection(name)
