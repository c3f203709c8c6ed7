"""CITES: a chunk cites a document when it links to it (weight 1) or names its title (0.8);
the edge points from the citing chunk to the cited document's first chunk.

What a chunk cites depends on its own text and links and on two corpus-wide tables: the
titles (matched longest first) and the link targets (a document's id, title, file name and
stem; the first document in corpus order owns a string). A changed document changes those
tables only at its own title and target strings, and a title can change what is found only
in a text holding all of the title's words. So an update recomputes the citations of the
new chunks, of the chunks whose text holds every word of a changed title, of the chunks
linking to a changed target string, and of the chunks that cited a removed chunk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from graph.titles import title_key
from graph.titles import title_words as _words
from graph.types import ChunkEdge, ChunkRecord
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.indexed import IndexedCorpus
from ingest.edges.links import link_options, normalise_link
from ingest.edges.model import EdgeKey, KindChange, KindEdges, diff
from ingest.edges.stored import StoredEdges
from ingest.tokens import Analyzer

KIND = "CITES"
_MIN_TITLE_CHARS = 4


class TitleMatcher:
    """Finds documents' titles named in a text, longest match first.

    Case-sensitive by default (so the song "Changed It" is not found in "it changed"): that
    is how chunk text names other documents. `fold=True` matches case-insensitively, for
    questions, which are often cased arbitrarily ("Lothair Ii"); it then ignores titles that
    are a single short word or only stopwords, which would match everywhere."""

    def __init__(self, titles: dict[str, str], analyzer: Analyzer, *, fold: bool = False) -> None:
        self._by_first: dict[str, dict[tuple[str, ...], list[str]]] = defaultdict(dict)
        self.max_len = 0
        self.fold = fold
        stop = analyzer._stop
        for doc_id, title in titles.items():
            key = title_key(title)
            if not key or len("".join(key)) < _MIN_TITLE_CHARS:
                continue
            if fold:
                key = tuple(w.casefold() for w in key)
                if all(w in stop for w in key) or (len(key) == 1 and len(key[0]) < 6):
                    continue
            elif len(key) == 1 and (key[0].casefold() in stop or not key[0][:1].isupper()):
                continue
            self._by_first[key[0]].setdefault(key, []).append(doc_id)
            self.max_len = max(self.max_len, len(key))

    def find(self, text: str) -> dict[str, int]:
        words = _words(text.casefold() if self.fold else text)
        found: dict[str, int] = defaultdict(int)
        i = 0
        while i < len(words):
            options = self._by_first.get(words[i])
            step = 1
            if options:
                for length in range(min(self.max_len, len(words) - i), 0, -1):
                    ids = options.get(tuple(words[i : i + length]))
                    if ids:
                        for doc_id in ids:
                            found[doc_id] += 1
                        step = length
                        break
            i += step
        return dict(found)


def _target_strings(doc_id: str, title: str) -> list[str]:
    """The strings a link can use to name a document: its id, title, file name and stem."""
    name = doc_id.rsplit("/", 1)[-1]
    out = [doc_id.casefold()]
    if title:
        out.append(title.casefold())
    out += [name.casefold(), name.rsplit(".", 1)[0].casefold()]
    return out


def _link_targets(chunks: Iterable[ChunkRecord]) -> dict[str, str]:
    targets: dict[str, str] = {}
    for c in chunks:
        if c.ordinal == 0:
            for s in _target_strings(c.doc_id, c.title):
                targets.setdefault(s, c.doc_id)
    return targets


class _Citations:
    def __init__(self, corpus: EdgeCorpus | IndexedCorpus, analyzer: Analyzer) -> None:
        self.first = corpus.first_chunk
        self.matcher = TitleMatcher(corpus.titles, analyzer)
        if isinstance(corpus, IndexedCorpus):  # from the documents: one row each
            self.targets: dict[str, str] = {}
            for doc_id in sorted(corpus.first_chunk):
                for s in _target_strings(doc_id, corpus.titles.get(doc_id, "")):
                    self.targets.setdefault(s, doc_id)
        else:
            self.targets = _link_targets(corpus.chunks)

    def of(self, c: ChunkRecord) -> dict[EdgeKey, float]:
        cited: dict[str, float] = {}
        for link in c.links:
            for option in normalise_link(link):
                if option in self.targets:
                    cited[self.targets[option]] = 1.0
                    break
        for doc_id in self.matcher.find(c.text):
            cited.setdefault(doc_id, 0.8)
        return {
            (c.id, self.first[d]): w for d, w in cited.items() if d != c.doc_id and d in self.first
        }


def weights(corpus: EdgeCorpus, analyzer: Analyzer) -> dict[EdgeKey, float]:
    citations = _Citations(corpus, analyzer)
    out: dict[EdgeKey, float] = {}
    for c in corpus.chunks:
        out.update(citations.of(c))
    return out


def build(corpus: EdgeCorpus, analyzer: Analyzer) -> KindEdges:
    return KindEdges(KIND, weights(corpus, analyzer))


def citing_chunks(change: CorpusChange) -> set[str]:
    """The chunks whose citations may differ from the stored ones."""
    corpus = change.corpus
    titles = {r.title for r in change.removed.values() if r.ordinal == 0}
    titles |= {corpus.titles[d] for d in change.docs if d in corpus.titles}
    keys = {k for k in map(title_key, titles) if k}
    strings = {
        s
        for r in change.removed.values()
        if r.ordinal == 0
        for s in _target_strings(r.doc_id, r.title)
    }
    strings |= {
        s
        for d in change.docs
        if d in corpus.titles or d in corpus.first_chunk
        for s in _target_strings(d, corpus.titles.get(d, ""))
    }
    out = set(change.added_ids)
    if isinstance(corpus, IndexedCorpus):
        out |= corpus.chunks_naming(keys) | corpus.chunks_linking(strings)
    else:
        for c in corpus.chunks:
            if (
                any(all(w in c.text for w in key) for key in keys)
                or link_options(c.links) & strings
            ):
                out.add(c.id)
    for src, _ in change.old_edges(KIND):
        if src in corpus:
            out.add(src)
    return out


def update(change: CorpusChange, analyzer: Analyzer, stored: StoredEdges) -> KindChange:
    citing = citing_chunks(change)
    citations = _Citations(change.corpus, analyzer)
    if isinstance(change.corpus, IndexedCorpus):
        change.corpus.by_id.prefetch(sorted(citing))
    new: dict[EdgeKey, float] = {}
    for cid in sorted(citing):
        new.update(citations.of(change.corpus.by_id[cid]))
    # Edges into a citing chunk belong to their source, which is not recomputed: left alone.
    present = {k: w for k, w in stored.around(sorted(citing), KIND).items() if k[0] in citing}
    return diff(KIND, present, new, change.old_edges(KIND))


def cites_edges(chunks: Sequence[ChunkRecord], analyzer: Analyzer) -> list[ChunkEdge]:
    return KindEdges(KIND, weights(EdgeCorpus(chunks, analyzer), analyzer)).edges()
