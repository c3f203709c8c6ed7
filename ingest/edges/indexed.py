"""The corpus an incremental edge update reads: the changed documents' chunks in full, every
other chunk only where the update asks about it, through indexes.

An update touches the changed chunks and a bounded neighbourhood of them (their SEMANTIC,
SHARES_ENTITY and UTILITY partners, the chunks that cite or name them). Reading every chunk
to find that neighbourhood made a one-document change cost the corpus (at 200k chunks,
seconds of reads before any work). Here each question the kinds ask is answered from an
index that already exists:

- membership, counts and the dense neighbours of a chunk: the search files just published
  for the same corpus (mapped; an exhaustive range search finds every partner above the
  SEMANTIC floor, re-scored exactly from the unit rows those files hold, as a build scores it);
- entity names and holders: the store's MENTIONS, by entity key;
- question terms, their document frequencies and holders: the utility index's postings;
- the chunks that may name a changed title: the lexical index's postings of the title's
  words (every chunk holding the title as words holds their tokens), confirmed on the text;
- the chunks that link to a changed document: the link index the edge workspace keeps;
- titles and first chunks: the store's document titles (one row per document).

So the kinds' update rules (ingest/edges/*.py) run unchanged on a corpus of which only the
parts they read are ever loaded; the results equal those over the whole corpus.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from graph.base import GraphStore
from graph.types import ChunkRecord
from ingest.edges.corpus import entity_names, question_terms
from ingest.edges.vectors import SCALE, embedding_units, unit_quantised
from ingest.tokens import Analyzer

if TYPE_CHECKING:
    from ingest.edges.workspace import EdgeWorkspace
    from ingest.indexes import SearchIndexes

_SQUARED = SCALE * SCALE
# Float32 cosines of the search files' unit vectors err from the exact quantised scores by
# far less than this; candidates within it of the floor are re-scored exactly.
_SLACK = 1e-4


class NeedsFullBuild(Exception):
    """The indexes cannot answer what this update needs (a title with no indexed word)."""


class _Lazy(Mapping[str, Any]):
    """A mapping filled on demand, `load` fetching many keys at once."""

    def __init__(self, load: Any) -> None:
        self._load = load
        self._found: dict[str, Any] = {}

    def prefetch(self, keys: Iterable[str]) -> None:
        missing = [k for k in dict.fromkeys(keys) if k not in self._found]
        if missing:
            got = self._load(missing)
            for k in missing:
                self._found[k] = got.get(k)

    def __getitem__(self, key: str) -> Any:
        self.prefetch([key])
        value = self._found[key]
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        self.prefetch([key])
        value = self._found[key]
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("an indexed corpus is never iterated whole")

    def __len__(self) -> int:
        raise TypeError("an indexed corpus is never counted whole")


class _Counts(_Lazy):
    """Counts by key, 0 for a key never counted (as a Counter answers)."""

    def __getitem__(self, key: str) -> Any:
        return self.get(key, 0)


class _Terms(_Lazy):
    """Question-term counts of the chunks that have questions; its length is their number."""

    def __init__(self, load: Any, with_questions: int) -> None:
        super().__init__(load)
        self._count = with_questions

    def __len__(self) -> int:
        return self._count


class IndexedCorpus:
    def __init__(
        self,
        store: GraphStore,
        indexes: SearchIndexes,
        analyzer: Analyzer,
        changed_docs: Iterable[str],
        with_questions: int,
        entity_labels: Sequence[str],
        workspace: EdgeWorkspace,
    ) -> None:
        self.analyzer = analyzer
        self._store = store
        self._indexes = indexes
        self._labels = tuple(entity_labels)
        self._workspace = workspace
        self.added_chunks = store.document_chunks(sorted(set(changed_docs)))
        added = {c.id: c for c in self.added_chunks}
        self._added = added
        self.by_id = _Lazy(self._records)
        self.by_id.prefetch([])  # the changed chunks are known: no read for them
        self.by_id._found.update(added)
        self.names = _Lazy(self._names)
        self.names._found.update({c.id: entity_names(c) for c in self.added_chunks})
        self.holders = _Lazy(self._holders)
        questions_added = sum(1 for c in self.added_chunks if c.questions)
        self.terms = _Terms(self._terms, with_questions)
        self.terms._found.update(
            {
                c.id: question_terms(c.questions, analyzer) if c.questions else None
                for c in self.added_chunks
            }
        )
        self.questions_added = questions_added
        self.term_df = _Counts(self._term_df)

    # ---- the corpus as the kinds read it -------------------------------------------------
    def __len__(self) -> int:
        return len(self._indexes.lexical)

    @cached_property
    def _ids(self) -> frozenset[str]:
        return frozenset(self._indexes.lexical.chunk_ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._added or chunk_id in self._ids

    def chunks_of(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        wanted = set(doc_ids)
        known = [c for c in self.added_chunks if c.doc_id in wanted]
        other = wanted - {c.doc_id for c in self.added_chunks}
        found = known + (self._store.document_chunks(sorted(other)) if other else [])
        return sorted(found, key=lambda c: (c.doc_id, c.ordinal))

    @cached_property
    def _documents(self) -> dict[str, tuple[str, str]]:
        """Document id → (title, first chunk id), for every document with a first chunk."""
        return self._store.document_titles()

    @cached_property
    def first_chunk(self) -> dict[str, str]:
        return {d: c for d, (_, c) in self._documents.items()}

    @cached_property
    def titles(self) -> dict[str, str]:
        return {d: t for d, (t, _) in self._documents.items() if t}

    # ---- reads behind the lazy mappings --------------------------------------------------
    def _records(self, ids: list[str]) -> dict[str, ChunkRecord]:
        return {c.id: c for c in self._store.chunk_records(ids)}

    def _names(self, ids: list[str]) -> dict[str, tuple[str, ...]]:
        found = self._store.chunk_entities(ids)
        return {
            c: tuple(sorted({e.name.casefold() for e in found.get(c, [])}))
            for c in ids
            if c in self
        }

    def _holders(self, names: list[str]) -> dict[str, set[str]]:
        keys = {f"{label}:{name}": name for name in names for label in self._labels}
        out: dict[str, set[str]] = {}
        for key, ids in self._store.entity_holders(list(keys)).items():
            out.setdefault(keys[key], set()).update(ids)
        return out

    def _terms(self, ids: list[str]) -> dict[str, Counter[str] | None]:
        utility = self._indexes.utility
        rows = utility.rows
        out: dict[str, Counter[str] | None] = {}
        for c in ids:
            row = rows.get(c)
            counts = utility.row_counts(row) if row is not None else {}
            out[c] = Counter(counts) if counts else None
        return out

    def _term_df(self, terms: list[str]) -> dict[str, int]:
        utility = self._indexes.utility
        return {
            t: utility.document_frequency(g) for t in terms if (g := utility.term_id(t)) is not None
        }

    # ---- index-backed answers the kinds ask for -------------------------------------------
    def chunks_with_terms(self, terms: Iterable[str]) -> set[str]:
        """The chunks whose questions hold one of `terms`."""
        utility = self._indexes.utility
        out: set[str] = set()
        for t in terms:
            g = utility.term_id(t)
            if g is not None:
                out.update(utility.chunk_ids[i] for i in utility.postings(g).tolist())
        out.update(c.id for c in self.added_chunks if terms_of(self, c.id) & set(terms))
        return out

    def chunks_naming(self, keys: Iterable[tuple[str, ...]]) -> set[str]:
        """The chunks whose text holds every word of one of the title `keys`: every chunk
        holding the title as words holds their tokens, so the lexical postings of those
        tokens give the candidates, and the text confirms them."""
        lexical = self._indexes.lexical
        out: set[str] = set()
        for key in keys:
            tokens = sorted(set(self.analyzer.tokens(" ".join(key))))
            if not tokens:
                raise NeedsFullBuild(f"title {' '.join(key)!r} has no indexed word")
            ids = [lexical.term_id(t) for t in tokens]
            if any(g is None for g in ids):
                continue  # a word no chunk holds: no chunk names the title
            rows: np.ndarray | None = None
            for g in sorted(ids, key=lambda g: lexical.document_frequency(g)):  # type: ignore[arg-type]
                found = lexical.postings(g)  # type: ignore[arg-type]
                rows = found if rows is None else np.intersect1d(rows, found, assume_unique=True)
                if not len(rows):
                    break
            candidates = [lexical.chunk_ids[i] for i in (rows if rows is not None else [])]
            self.by_id.prefetch(candidates)
            out.update(
                c
                for c in candidates
                if (r := self.by_id.get(c)) is not None and all(w in r.text for w in key)
            )
        out.update(c.id for c in self.added_chunks for key in keys if all(w in c.text for w in key))
        return out

    def chunks_linking(self, strings: set[str]) -> set[str]:
        """The chunks with a link that normalises to one of `strings` (the link index)."""
        # The index is of the last build: chunks removed since are left out.
        linking = {c for c in self._workspace.linking(strings) if c in self}
        return linking | {
            c.id for c in self.added_chunks if self._workspace.link_options(c) & strings
        }

    @property
    def utility_index(self) -> Any:
        """The published utility index (question-term postings): UTILITY's candidates."""
        return self._indexes.utility

    def semantic_space(self, floor: float) -> IndexedVectorSpace:
        return IndexedVectorSpace(self, floor)

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """SEMANTIC's quantised rows (`vectors.embedding_units`) of the chunks: read from the
        published dense index, which holds each embedding's unit row, so no embedding crosses
        from the store (at 50k chunks on Neo4j that read was 3.5 s of a one-document
        change); a changed chunk the index lacks is quantised from its record."""
        dense = self._indexes.dense
        indexed = [c for c in ids if c in dense]
        out: dict[str, np.ndarray] = {}
        if indexed:
            out.update(zip(indexed, unit_quantised(dense.vectors(indexed)), strict=True))
        missing = []
        for c in ids:
            if c in out:
                continue
            record = self._added.get(c)
            if record is not None and record.embedding is not None:
                out[c] = embedding_units(np.asarray(record.embedding)[None, :])[0]
            elif record is None:
                missing.append(c)
        found = self._store.chunk_vectors("embedding", missing) if missing else {}
        if found:
            keys = list(found)
            rows = embedding_units(np.stack([found[k] for k in keys]))
            out.update(zip(keys, rows, strict=True))
        return out


def terms_of(corpus: IndexedCorpus, chunk_id: str) -> set[str]:
    found = corpus.terms.get(chunk_id)
    return set(found) if found else set()


class IndexedVectorSpace:
    """SEMANTIC's score space over the indexed corpus: a chunk's partners are every chunk
    with an embedding whose exact score (quantised unit rows, as `vectors.VectorSpace`
    computes it) reaches the floor. Candidates come from an exhaustive range search of the
    published dense index just below the floor."""

    def __init__(self, corpus: IndexedCorpus, floor: float) -> None:
        self.corpus = corpus
        self.floor = floor
        self._rows: dict[str, np.ndarray] = {}

    @cached_property
    def _members(self) -> frozenset[str]:
        return frozenset(self.corpus._indexes.dense.ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._members

    def _quantised(self, ids: Iterable[str]) -> None:
        missing = [c for c in dict.fromkeys(ids) if c not in self._rows]
        for start in range(0, len(missing), 2000):
            self._rows.update(self.corpus.embeddings(missing[start : start + 2000]))

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        dense = self.corpus._indexes.dense
        self._quantised(ids)
        out: dict[str, dict[str, float]] = {}
        for start in range(0, len(ids), 256):
            part = list(ids[start : start + 256])
            queries = np.stack([self._rows[c] for c in part]).astype(np.float32) / np.float32(SCALE)
            found = dense.within(queries, self.floor - _SLACK)
            self._quantised(c for hits in found for c in hits)
            for x, hits in zip(part, found, strict=True):
                row = self._rows[x]
                scores: dict[str, float] = {}
                for y in sorted(hits):
                    if y == x or y not in self._rows:
                        continue
                    s = float(self._rows[y] @ row) / _SQUARED
                    if s >= self.floor:
                        scores[y] = s
                out[x] = scores
        return out
