"""Query-time reads of document identity that every mode shares: which documents a text
names by title, and the document a chunk belongs to. They live here, below the retrievers
and the engine, so both can use them without importing each other."""

from __future__ import annotations

from ingest.edges import TitleMatcher
from ingest.tokens import Analyzer


class TitleLinks:
    """Query-time entity linking by document title: which documents a text names
    (case-insensitively), and each document's first chunk."""

    def __init__(self, titles: dict[str, tuple[str, str]], analyzer: Analyzer) -> None:
        self.title = {d: t for d, (t, _) in titles.items()}
        self.first_chunk = {d: c for d, (_, c) in titles.items()}
        self._matcher = TitleMatcher(self.title, analyzer, fold=True)

    def find(self, text: str) -> list[str]:
        return sorted(self._matcher.find(text))


def doc_id_of(chunk_id: str) -> str:
    """Chunk ids are `<doc id>#<ordinal>-<hash>` (ingest.chunkers.chunk_id)."""
    return chunk_id.rsplit("#", 1)[0]
