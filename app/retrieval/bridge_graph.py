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
`GraphStore` interface, so both backends build the same one. It is built in Python once
(3 s on 2wiki-dev's 7.5k chunks) and then, for each newly published index, derived from the
previous version's graph by what changed (0.1–0.4 s for 1–100 changed chunks there,
`bench/out/findings/bridge-update-2wiki-dev.json`), equal to a fresh build array for
array; it is shared by the engine's retrievers.
"""

from __future__ import annotations

import copy
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from app.retrieval.links import doc_id_of

if TYPE_CHECKING:
    from app.retrieval.base import RetrievalContext
    from graph.types import ChunkView
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
    while the words so far begin some name (a prefix table), so the cost is about one
    lookup per word rather than one per n-gram. The prefix table counts the names each
    prefix begins, so a matcher for a changed vocabulary is derived without rebuilding."""

    def __init__(self, names: set[str], max_words: int) -> None:
        self.names = set(names)
        self.max_words = max_words
        self._prefixes: dict[str, int] = {}
        self._count(names, 1)

    def _count(self, names: set[str], sign: int) -> None:
        prefixes = self._prefixes
        for name in names:
            words = name.split(" ")
            for k in range(1, len(words) + 1):
                prefix = " ".join(words[:k])
                left = prefixes.get(prefix, 0) + sign
                if left:
                    prefixes[prefix] = left
                else:
                    del prefixes[prefix]

    def changed(self, added: set[str], removed: set[str]) -> NameMatcher:
        """A new matcher for this vocabulary plus `added` minus `removed` (this one is
        left as it is: queries on the previous index still use it)."""
        out = copy.copy(self)
        out.names = (self.names - removed) | added
        out._prefixes = dict(self._prefixes)
        out._count(removed & self.names, -1)
        out._count(added - self.names, 1)
        return out

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


class UpdateState:
    """What deriving the next version's graph needs (`update_bridge_graph`): the names each
    chunk adds to the vocabulary, how many chunks add each name, and each document's stored
    title. A graph loaded from its kept file reads them only when an update asks (a serving
    process that never updates never holds them: at 200k chunks, a set of names per chunk)."""

    __slots__ = ("_load", "_value")

    def __init__(
        self,
        value: tuple[dict[str, frozenset[str]], dict[str, int], dict[str, str]] | None = None,
        load: Any = None,
    ) -> None:
        self._value, self._load = value, load

    def _get(self) -> tuple[dict[str, frozenset[str]], dict[str, int], dict[str, str]]:
        if self._value is None:
            self._value = self._load()
            self._load = None
        return self._value

    @property
    def gives(self) -> dict[str, frozenset[str]]:
        return self._get()[0]

    @property
    def givers(self) -> dict[str, int]:
        return self._get()[1]

    @property
    def doc_titles(self) -> dict[str, str]:
        return self._get()[2]


@dataclass(slots=True)
class BridgeGraph:
    """Chunks (rows, in the dense index's order) × names (columns, sorted): `mentions` is 1
    where a chunk contains a name, `titles` where the name is the chunk's own document
    title. `state` lets the next index version's graph be derived from this one by what
    changed (`update_bridge_graph`)."""

    chunk_ids: list[str]
    chunk_index: dict[str, int]
    names: list[str]
    name_index: dict[str, int]
    mentions: sparse.csr_matrix
    titles: sparse.csr_matrix
    matcher: NameMatcher
    capitalised: bool
    state: UpdateState  # gives, givers, doc_titles: read when the next version is derived
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


def _found(matcher: NameMatcher, text: str, capitalised: bool) -> set[str]:
    words, upper = _words(text)
    return {n for n, a, _ in matcher.find(words) if upper[a] or not capitalised}


def _vocabulary_of(
    engine: RetrievalContext, ids: list[str]
) -> tuple[dict[str, ChunkView], dict[str, str | None], dict[str, frozenset[str]]]:
    """The chunks' views, own titles (as names) and the names each adds to the
    vocabulary: its entity mentions (numeric labels left out) and its title."""
    analyzer = engine.analyzer
    views = {v.id: v for v in engine.store.get_chunks(ids)}
    entities = engine.store.chunk_entities(ids)
    own_title = {c: title_name(analyzer, v.title) for c, v in views.items()}
    gives = {}
    for c in views:
        names = {
            name
            for m in entities.get(c, ())
            if m.label not in NUMERIC_LABELS and (name := normalise_name(analyzer, m.name))
        }
        if own_title[c]:
            names.add(own_title[c])
        gives[c] = frozenset(names)
    return views, own_title, gives


class _Entries:
    """(row, name) entries of the two matrices, gathered before they are assembled."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.title: list[np.ndarray] = []

    def add(self, rows: np.ndarray, cols: np.ndarray, title: np.ndarray) -> None:
        self.rows.append(np.asarray(rows, dtype=np.int64))
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.title.append(np.asarray(title, dtype=bool))

    def add_linked(
        self, row: int, names: set[str], title: str | None, name_index: dict[str, int]
    ) -> None:
        linked = names | ({title} if title else set())
        cols = [name_index[n] for n in linked]
        self.add(
            np.full(len(cols), row), np.asarray(cols), np.asarray([n == title for n in linked])
        )

    def matrices(self, shape: tuple[int, int]) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
        """`mentions` and `titles`, in canonical form (sorted indices): the same entries
        give the same arrays, so a derived graph walks exactly as a fresh one."""
        rows = np.concatenate(self.rows) if self.rows else np.zeros(0, dtype=np.int64)
        cols = np.concatenate(self.cols) if self.cols else np.zeros(0, dtype=np.int64)
        flags = np.concatenate(self.title) if self.title else np.zeros(0, dtype=bool)
        out = []
        for keep in (np.ones(len(rows), dtype=bool), flags):
            m = sparse.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=shape)
            m.sum_duplicates()
            m.sort_indices()
            out.append(m)
        return out[0], out[1]


def _graph(
    chunk_ids: list[str],
    names: list[str],
    entries: _Entries,
    matcher: NameMatcher,
    capitalised: bool,
    gives: dict[str, frozenset[str]],
    givers: dict[str, int],
    doc_titles: dict[str, str],
) -> BridgeGraph:
    mentions, titles = entries.matrices((len(chunk_ids), len(names)))
    return BridgeGraph(
        chunk_ids,
        {c: i for i, c in enumerate(chunk_ids)},
        names,
        {n: j for j, n in enumerate(names)},
        mentions,
        titles,
        matcher,
        capitalised,
        UpdateState((gives, givers, doc_titles)),
    )


def build_bridge_graph(engine: RetrievalContext, max_words: int, capitalised: bool) -> BridgeGraph:
    """The graph of the engine's index, from every chunk."""
    chunk_ids = list(engine.dense.ids)
    views, own_title, gives = _vocabulary_of(engine, chunk_ids)
    givers = dict(Counter(n for names in gives.values() for n in names))
    names = sorted(givers)
    name_index = {n: j for j, n in enumerate(names)}
    matcher = NameMatcher(set(givers), max_words)
    entries = _Entries()
    for i, c in enumerate(chunk_ids):
        if (view := views.get(c)) is not None:
            found = _found(matcher, view.text, capitalised)
            entries.add_linked(i, found, own_title[c], name_index)
    doc_titles = {v.doc_id: v.title for v in views.values()}
    return _graph(chunk_ids, names, entries, matcher, capitalised, gives, givers, doc_titles)


def update_bridge_graph(old: BridgeGraph, engine: RetrievalContext, max_words: int) -> BridgeGraph:
    """The graph of the engine's index derived from `old` (another version's graph, same
    parameters), equal to `build_bridge_graph`'s: only the chunks added since are read and
    matched against every name; kept chunks keep their entries (re-indexed, less the names
    no chunk gives any more) and are matched against the new names only where the lexical
    index says they hold the new name's rarest word. Reading and matching cost what
    changed; re-indexing the matrices is a few array operations over their entries."""
    capitalised = old.capitalised
    chunk_ids = list(engine.dense.ids)
    # A document whose title changed keeps its chunk ids (they hash the text): re-read it.
    retitled = {d for d, t in engine.links.title.items() if old.state.doc_titles.get(d, t) != t}
    kept = {c for c in set(chunk_ids) & set(old.chunk_ids) if doc_id_of(c) not in retitled}
    added = [c for c in chunk_ids if c not in kept]
    removed = [c for c in old.chunk_ids if c not in kept]
    if len(added) + len(removed) > len(chunk_ids) // 4:  # a large change: build it whole
        return build_bridge_graph(engine, max_words, capitalised)
    gives = dict(old.state.gives)
    givers = Counter(old.state.givers)
    for c in removed:
        givers.subtract(gives.pop(c, frozenset()))
    views, own_title, new_gives = _vocabulary_of(engine, added)
    gives.update(new_gives)
    for given in new_gives.values():
        givers.update(given)
    vocabulary = {n for n, k in givers.items() if k > 0}
    gone = set(old.state.givers) - vocabulary
    fresh = vocabulary - set(old.state.givers)
    matcher = old.matcher.changed(fresh, gone)
    names = sorted(vocabulary)
    name_index = {n: j for j, n in enumerate(names)}
    row_of = {c: i for i, c in enumerate(chunk_ids)}

    entries = _Entries()
    old_rows = np.asarray([row_of[c] if c in kept else -1 for c in old.chunk_ids], dtype=np.int64)
    old_cols = np.asarray([name_index.get(n, -1) for n in old.names], dtype=np.int64)
    coo, titled = old.mentions.tocoo(), old.titles.tocoo()
    width = max(len(old.names), 1)
    is_title = np.isin(
        coo.row.astype(np.int64) * width + coo.col, titled.row.astype(np.int64) * width + titled.col
    )
    keep = (old_rows[coo.row] >= 0) & (old_cols[coo.col] >= 0)
    entries.add(old_rows[coo.row[keep]], old_cols[coo.col[keep]], is_title[keep])
    if fresh and kept:
        for c, hits in _kept_matches(engine, fresh, kept, max_words, capitalised).items():
            entries.add_linked(row_of[c], hits, None, name_index)
    for c, view in views.items():
        entries.add_linked(
            row_of[c], _found(matcher, view.text, capitalised), own_title[c], name_index
        )
    doc_titles = {d: t for d, t in old.state.doc_titles.items() if d in engine.links.title}
    doc_titles.update((v.doc_id, v.title) for v in views.values())
    givers_now = {n: k for n, k in givers.items() if k > 0}
    return _graph(chunk_ids, names, entries, matcher, capitalised, gives, givers_now, doc_titles)


def _kept_matches(
    engine: RetrievalContext, names: set[str], kept: set[str], max_words: int, capitalised: bool
) -> dict[str, set[str]]:
    """Where kept chunks contain new names: candidates from the lexical index (a chunk
    holding a name holds its words' tokens), confirmed by matching the text."""
    lexical = engine.lexical
    candidates: set[str] = set()
    for name in names:
        terms = lexical.term_ids(engine.analyzer.tokens(name))
        if not terms:
            continue
        rarest = min(terms, key=lexical.document_frequency)
        candidates.update(lexical.chunk_ids[i] for i in lexical.postings(rarest))
    ids = sorted(candidates & kept)
    if not ids:
        return {}
    matcher = NameMatcher(names, max_words)
    out = {}
    for view in engine.store.get_chunks(ids):
        if hits := _found(matcher, view.text, capitalised):
            out[view.id] = hits
    return out


def make_graph(
    engine: RetrievalContext, previous: BridgeGraph | None, key: tuple[int, bool]
) -> BridgeGraph:
    max_words, capitalised = key
    if previous is None:
        return build_bridge_graph(engine, max_words, capitalised)
    return update_bridge_graph(previous, engine, max_words)
