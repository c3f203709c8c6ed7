"""The passage–name graph the `bridge` mode walks: every indexed chunk and every name the
corpus knows, a chunk linked to each name its text (or its document title) contains.

Names are the corpus's own: the entity mentions spaCy found (numeric labels left out) and
the document titles (a trailing qualifier such as "(film)" dropped), normalised to
lower-case words without a leading article. Linking is by exact word n-gram match over
every chunk's text, not by where spaCy happened to tag the name: spaCy-small misses many
mentions (names inside cast lists, a person named in a passage about something else), and a
bridge between two passages is exactly such a mention — the actress named in a film's cast
and in another film's passage. Matching every known name everywhere links those passages.

The graph is a pure function of the published chunks and their mentions, read through the
`GraphStore` interface, so both backends build the same one; it is built in Python once per
published index (a few seconds on 7k chunks) and shared by the engine's retrievers.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

if TYPE_CHECKING:
    from app.engine import Engine
    from ingest.tokens import Analyzer

NUMERIC_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
LEADING_ARTICLES = frozenset({"the", "a", "an"})
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # ingest.tokens' word


def normalise_name(analyzer: Analyzer, text: str) -> str | None:
    """Lower-case words, leading article dropped; None when nothing searchable is left
    ("The Beatles" and "the beatles" → "beatles"; "The" → None)."""
    words = analyzer.all_words(text)
    while words and words[0] in LEADING_ARTICLES:
        words = words[1:]
    name = " ".join(words)
    return name if words and analyzer.tokens(name) else None


def title_name(analyzer: Analyzer, title: str) -> str | None:
    """A document title as a name: "Capote (film)" → "capote"."""
    return normalise_name(analyzer, _QUALIFIER.sub("", title)) if title else None


class NameMatcher:
    """Finds every known name in a word sequence: a walk along each start word that goes on
    while the words so far begin some name (a prefix set), so the cost is about one set
    lookup per word rather than one per n-gram."""

    def __init__(self, names: set[str], max_words: int) -> None:
        self.names = names
        self.max_words = max_words
        self._prefixes: set[str] = set()
        for name in names:
            words = name.split(" ")
            self._prefixes.update(" ".join(words[:k]) for k in range(1, len(words) + 1))

    def find(self, words: list[str]) -> list[tuple[str, int, int]]:
        """(name, first word, end word) of every match, overlapping ones included."""
        found = []
        prefixes, names = self._prefixes, self.names
        for start in range(len(words)):
            text, end = words[start], start + 1
            while text in prefixes:
                if text in names:
                    found.append((text, start, end))
                if end >= len(words) or end - start >= self.max_words:
                    break
                text = f"{text} {words[end]}"
                end += 1
        return found


@dataclass(slots=True)
class BridgeGraph:
    """Chunks (rows) × names (columns): `mentions` is 1 where a chunk contains a name,
    `titles` where the name is the chunk's own document title."""

    chunk_ids: list[str]
    chunk_index: dict[str, int]
    names: list[str]
    name_index: dict[str, int]
    mentions: sparse.csr_matrix
    titles: sparse.csr_matrix
    matcher: NameMatcher
    capitalised: bool
    walks: dict[tuple[float, int, float], Any] = field(default_factory=dict)  # → BridgeWalk
    walk_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name_df(self) -> np.ndarray:
        """How many chunks contain each name."""
        return np.asarray(self.mentions.sum(axis=0)).ravel()

    def names_in(self, analyzer: Analyzer, text: str) -> list[int]:
        """Column ids of the names a text contains (a question's own names)."""
        found = self.matcher.find(analyzer.all_words(text))
        return sorted({j for n, _, _ in found if (j := self.name_index.get(n)) is not None})


def _words(text: str) -> tuple[list[str], list[bool]]:
    """The analyzer's words of a text and whether each is written capitalised (or is a
    number), which is how running text writes a name."""
    words = _WORD.findall(text)
    return [w.casefold() for w in words], [w[0].isupper() or w[0].isdigit() for w in words]


def build_bridge_graph(engine: Engine, max_words: int, capitalised: bool) -> BridgeGraph:
    analyzer = engine.analyzer
    chunk_ids = list(engine.dense.ids)
    views = engine.store.get_chunks(chunk_ids)
    vocabulary: set[str] = set()
    for mentions in engine.store.chunk_entities(chunk_ids).values():
        for m in mentions:
            if m.label not in NUMERIC_LABELS and (name := normalise_name(analyzer, m.name)):
                vocabulary.add(name)
    own_title = {v.id: title_name(analyzer, v.title) for v in views}
    vocabulary.update(t for t in own_title.values() if t)
    matcher = NameMatcher(vocabulary, max_words)
    name_index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    is_title: list[bool] = []
    chunk_index = {c: i for i, c in enumerate(chunk_ids)}
    for view in views:
        title = own_title[view.id]
        words, upper = _words(view.text)
        found = {n for n, a, _ in matcher.find(words) if upper[a] or not capitalised}
        if title:
            found.add(title)
        for name in sorted(found):
            rows.append(chunk_index[view.id])
            cols.append(name_index.setdefault(name, len(name_index)))
            is_title.append(name == title)
    shape = (len(chunk_ids), len(name_index))
    ones = np.ones(len(rows))
    mentions = sparse.csr_matrix((ones, (rows, cols)), shape=shape)
    flags = np.asarray(is_title, dtype=bool)
    titles = sparse.csr_matrix(
        (ones[flags], (np.asarray(rows)[flags], np.asarray(cols)[flags])), shape=shape
    )
    names = sorted(name_index, key=name_index.__getitem__)
    return BridgeGraph(
        chunk_ids,
        chunk_index,
        names,
        name_index,
        mentions,
        titles,
        matcher,
        capitalised,
    )


def bridge_graph(engine: Engine, max_words: int, capitalised: bool) -> BridgeGraph:
    """The graph of the engine's published index, built once per index version (no store
    round trip: the FAISS and BM25 objects are replaced whenever the corpus changes)."""
    return engine.derived(
        "bridge graph",
        (max_words, capitalised),
        lambda: build_bridge_graph(engine, max_words, capitalised),
    )
