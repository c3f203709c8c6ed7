"""The chunk facts the edge builders read, indexed once per run, and the change an update
starts from.

`EdgeCorpus` is the current corpus (every stored chunk, as `GraphStore.corpus()` returns it).
`CorpusChange` is what changed since the stored edges were built: the documents whose chunks
were replaced, added or removed, and a `RemovedChunk` snapshot of every chunk that had edges
then and is gone now (its old facts and its old edges, taken before the store deleted it).
Together they give the old corpus's statistics exactly (`old_count`), which is how an update
knows which corpus-wide quantities moved.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from graph.types import ChunkEdge, ChunkRecord
from ingest.edges.vectors import embedding_units
from ingest.tokens import Analyzer


def entity_names(chunk: ChunkRecord) -> tuple[str, ...]:
    """An entity is its case-folded name, whatever label NER gave it."""
    return tuple(sorted({e.name.casefold() for e in chunk.entities}))


def question_terms(questions: Sequence[str], analyzer: Analyzer) -> Counter[str]:
    return Counter(analyzer.tokens(" ".join(questions)))


class EdgeCorpus:
    """`known_terms`: question-term counts already computed for some chunks (kept in the
    store's edge state), so only the others' questions are tokenised. `known_units`: the
    quantised unit rows of some chunks' embeddings (`vectors.embedding_units`, kept by the
    edge workspace), so only the others are quantised — once per run, for SEMANTIC and the
    workspace alike (`unit_rows`)."""

    def __init__(
        self,
        chunks: Iterable[ChunkRecord],
        analyzer: Analyzer,
        known_terms: dict[str, dict[str, int]] | None = None,
        known_units: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.analyzer = analyzer
        self._known_terms = known_terms or {}
        self._known_units = known_units or {}
        # Python's order, not the backend's: both stores must feed the builders alike.
        self.chunks = sorted(chunks, key=lambda c: (c.doc_id, c.ordinal))
        self.by_id = {c.id: c for c in self.chunks}
        by_doc: dict[str, list[ChunkRecord]] = defaultdict(list)
        for c in self.chunks:
            by_doc[c.doc_id].append(c)
        self.by_doc = dict(by_doc)

    def __len__(self) -> int:
        return len(self.chunks)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.by_id

    @cached_property
    def names(self) -> dict[str, tuple[str, ...]]:
        return {c.id: entity_names(c) for c in self.chunks}

    @cached_property
    def holders(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for cid, names in self.names.items():
            for name in names:
                out[name].add(cid)
        return dict(out)

    @cached_property
    def terms(self) -> dict[str, Counter[str]]:
        """Question-term counts of every chunk that has utility questions."""
        known = self._known_terms
        return {
            c.id: Counter(known[c.id])
            if c.id in known
            else question_terms(c.questions, self.analyzer)
            for c in self.chunks
            if c.questions
        }

    @cached_property
    def unit_rows(self) -> tuple[list[str], np.ndarray]:
        """The ids of the chunks that have an embedding, in corpus order, and their quantised
        unit rows as one int32 matrix (exact: every entry is at most 2^24 in magnitude)."""
        have = [c for c in self.chunks if c.embedding is not None]
        known = self._known_units
        if not have:
            return [], np.zeros((0, 0), dtype=np.int32)
        rows = np.empty((len(have), len(have[0].embedding)), dtype=np.int32)
        reused = [i for i, c in enumerate(have) if c.id in known]
        if reused:
            rows[reused] = np.stack([known[have[i].id] for i in reused])
        fresh = [i for i, c in enumerate(have) if c.id not in known]
        if fresh:
            rows[fresh] = embedding_units(np.stack([have[i].embedding for i in fresh]))
        self._known_units = {}  # every row is in the matrix now
        return [c.id for c in have], rows

    @cached_property
    def units(self) -> dict[str, np.ndarray]:
        """A chunk's quantised unit row by id (views into `unit_rows`)."""
        ids, rows = self.unit_rows
        return dict(zip(ids, rows, strict=True))

    @cached_property
    def term_df(self) -> Counter[str]:
        return Counter(t for counts in self.terms.values() for t in counts)

    @cached_property
    def first_chunk(self) -> dict[str, str]:
        return {c.doc_id: c.id for c in self.chunks if c.ordinal == 0}

    @cached_property
    def titles(self) -> dict[str, str]:
        return {c.doc_id: c.title for c in self.chunks if c.ordinal == 0 and c.title}

    def chunks_of(self, doc_ids: Iterable[str]) -> list[ChunkRecord]:
        return [c for d in sorted(set(doc_ids)) for c in self.by_doc.get(d, ())]


@dataclass(slots=True)
class RemovedChunk:
    """A chunk as it was when the stored edges were built, kept after the store deleted it."""

    id: str
    doc_id: str
    ordinal: int
    title: str
    names: tuple[str, ...]
    terms: tuple[str, ...]
    has_questions: bool
    has_embedding: bool
    edges: list[ChunkEdge] = field(default_factory=list)

    @classmethod
    def of(cls, chunk: ChunkRecord, edges: Sequence[ChunkEdge], analyzer: Analyzer) -> RemovedChunk:
        return cls(
            id=chunk.id,
            doc_id=chunk.doc_id,
            ordinal=chunk.ordinal,
            title=chunk.title,
            names=entity_names(chunk),
            terms=tuple(sorted(question_terms(chunk.questions, analyzer))),
            has_questions=bool(chunk.questions),
            has_embedding=chunk.embedding is not None,
            edges=list(edges),
        )

    def as_json(self) -> dict[str, object]:
        return {
            "doc": self.doc_id,
            "ordinal": self.ordinal,
            "title": self.title,
            "names": list(self.names),
            "terms": list(self.terms),
            "questions": self.has_questions,
            "embedding": self.has_embedding,
            "edges": [[e.kind, e.src, e.dst, e.weight] for e in self.edges],
        }

    @classmethod
    def from_json(cls, chunk_id: str, raw: dict) -> RemovedChunk:
        return cls(
            id=chunk_id,
            doc_id=raw["doc"],
            ordinal=int(raw["ordinal"]),
            title=raw["title"],
            names=tuple(raw["names"]),
            terms=tuple(raw["terms"]),
            has_questions=bool(raw["questions"]),
            has_embedding=bool(raw["embedding"]),
            edges=[ChunkEdge(k, s, d, float(w)) for k, s, d, w in raw["edges"]],
        )


@dataclass
class CorpusChange:
    """The documents changed since the last edge build (`docs`: their chunks in `corpus` are
    new) and the snapshots of the chunks that left (`removed`)."""

    corpus: EdgeCorpus
    docs: set[str]
    removed: dict[str, RemovedChunk]

    @cached_property
    def added(self) -> list[ChunkRecord]:
        """Current chunks of the changed documents: none of them had edges."""
        return self.corpus.chunks_of(self.docs)

    @cached_property
    def added_ids(self) -> set[str]:
        return {c.id for c in self.added}

    def old_edges(self, kind: str) -> dict[tuple[str, str], float]:
        """The removed chunks' edges of `kind` as they were stored."""
        return {
            (e.src, e.dst): e.weight
            for r in self.removed.values()
            for e in r.edges
            if e.kind == kind
        }

    def old_count(
        self,
        new_count: int,
        added: Callable[[ChunkRecord], bool],
        removed: Callable[[RemovedChunk], bool],
    ) -> int:
        """A count over the old corpus from the same count over the current one: the old
        corpus is the current one minus the added chunks plus the removed ones."""
        return (
            new_count
            - sum(1 for c in self.added if added(c))
            + sum(1 for r in self.removed.values() if removed(r))
        )
