"""Fixtures the reader's test modules share."""

from __future__ import annotations

import pytest

from app.reader import Reader


@pytest.fixture(scope="module")
def reader() -> Reader:
    """A reader of its own per module (the spaCy pipeline itself is loaded once)."""
    return Reader()
