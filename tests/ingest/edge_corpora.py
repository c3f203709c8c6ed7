"""Random corpora and edits for the incremental chunk-edge tests, written through a real
store the way `ingest.runner` writes (journal entry in the same transaction as the removal).

Made to reach every branch of the edge kinds on a few hundred chunks: clustered embeddings
with exact duplicates (score ties), a small entity pool whose frequencies cross
`entity_max_chunks` and 2, shared question words (rounded df moving), titles named in other
chunks' text (longest match: "Ash Vale" beside "Ash Vale North"), links by file name and by
title, sections, and edits that keep a chunk's text (same chunk id) while changing its
document's title.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from graph.base import GraphStore
from graph.types import ChunkRecord, DocumentRecord, EntityMention, GraphDelta
from ingest.chunkers import chunk_id
from ingest.config import EdgeConfig
from ingest.edges.journal import JournalWriter
from ingest.tokens import Analyzer

CFG = EdgeConfig(
    semantic_k=3,
    semantic_min_cosine=0.3,
    entity_max_chunks=6,
    entity_top_k=3,
    utility_k=2,
    utility_min_similarity=0.15,
    section_max_chunks=2,
)
ANALYZER = Analyzer()
_PLACES = ["Ash", "Birch", "Cedar", "Dune", "Elm", "Fern", "Glen", "Heath", "Iris", "Juniper"]
_SUFFIX = ["Vale", "Ford", "Hill", "Moor"]
_WORDS = [
    "river",
    "castle",
    "battle",
    "king",
    "queen",
    "bridge",
    "harbour",
    "tower",
    "forest",
    "abbey",
    "mill",
    "market",
]
_NAMES = [f"Person {c}" for c in "ABCDEFGHIJKLMNOPQRST"]
_SECTIONS = [(), ("History",), ("History", "Early"), ("History", "Late"), ("Geography",)]
_DIM = 6


@dataclass
class RandomCorpus:
    """`prefix` starts every document id (a collection's name, as ingest's ids do)."""

    seed: int
    prefix: str = ""
    docs: dict[str, tuple[str, list[tuple[str, tuple[str, ...]]]]] = field(default_factory=dict)
    clock: float = 1.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.centres = np.random.default_rng(self.seed).normal(size=(5, _DIM))
        self._next = 0

    def title(self) -> str:
        r = self.rng
        base = f"{r.choice(_PLACES)} {r.choice(_SUFFIX)}"
        return base + " North" if r.random() < 0.2 else base

    def text(self) -> str:
        r = self.rng
        words = r.sample(_WORDS, 4)
        mentions = [t for t, _ in self.docs.values()]
        if mentions and r.random() < 0.6:
            words.insert(r.randrange(len(words)), r.choice(mentions))
        return "The " + " ".join(words) + "."

    def new_doc(self) -> str:
        self._next += 1
        doc_id = f"{self.prefix}docs/d{self._next}.md"
        self.docs[doc_id] = (self.title(), self._pieces(self.rng.randint(1, 4)))
        return doc_id

    def _pieces(self, n: int) -> list[tuple[str, tuple[str, ...]]]:
        return [(self.text(), self.rng.choice(_SECTIONS)) for _ in range(n)]

    def change_doc(self, doc_id: str) -> None:
        """New text for some chunks; sometimes only the title changes (same chunk ids)."""
        title, pieces = self.docs[doc_id]
        r = self.rng
        if r.random() < 0.3:
            self.docs[doc_id] = (self.title(), pieces)
            return
        pieces = list(pieces)
        pieces[r.randrange(len(pieces))] = (self.text(), r.choice(_SECTIONS))
        if r.random() < 0.3:
            pieces.append((self.text(), r.choice(_SECTIONS)))
        elif len(pieces) > 1 and r.random() < 0.3:
            pieces.pop()
        self.docs[doc_id] = (title, pieces)

    def chunks(self, doc_id: str) -> list[ChunkRecord]:
        """Deterministic facts per (document, text): re-deriving gives equal records."""
        title, pieces = self.docs[doc_id]
        out = []
        for ordinal, (text, section) in enumerate(pieces):
            r = random.Random(f"{self.seed}:{text}")
            centre = self.centres[r.randrange(len(self.centres))]
            if r.random() < 0.15:
                emb = centre.copy()  # exact duplicates tie
            else:
                emb = centre + np.array([r.gauss(0, 0.6) for _ in range(_DIM)])
            names = r.sample(_NAMES[: 8 + r.randrange(12)], r.randint(0, 3))
            links = []
            if r.random() < 0.25 and self.docs:
                target = r.choice(sorted(self.docs))
                links.append(target.rsplit("/", 1)[-1] if r.random() < 0.5 else target)
            if r.random() < 0.1:
                links.append(self.docs[r.choice(sorted(self.docs))][0].replace(" ", "_"))
            questions = tuple(
                " ".join(r.sample(_WORDS, 3)) + f" [who] {title}"
                for _ in range(r.choice((0, 1, 1, 2)))
            )
            out.append(
                ChunkRecord(
                    id=chunk_id(doc_id, ordinal, text),
                    doc_id=doc_id,
                    ordinal=ordinal,
                    title=title,
                    text=text,
                    section_path=section,
                    embedding=emb.astype(np.float32) if r.random() > 0.05 else None,
                    entities=tuple(EntityMention(n, r.choice(["PERSON", "ORG"])) for n in names),
                    links=tuple(links),
                    questions=questions,
                    tokens=tuple(ANALYZER.tokens(text)),
                )
            )
        return out

    def record(self, doc_id: str) -> DocumentRecord:
        self.clock += 1.0
        title, pieces = self.docs[doc_id]
        digest = str(hash((title, tuple(pieces))))
        return DocumentRecord(doc_id, f"/corpus/{doc_id}", title, digest, self.clock)


def corpus_for(store: GraphStore, seed: int) -> RandomCorpus:
    """A corpus whose ids start with the store's collection, as ingest's ids do: tests on
    several workers then never write the same index entries of one Neo4j database."""
    return RandomCorpus(seed, prefix=f"{getattr(store, 'collection', 'local')}:")


def write(
    store: GraphStore,
    corpus: RandomCorpus,
    written: list[str],
    removed: list[str],
    *,
    journal: bool = True,
) -> None:
    """Store `written` documents (new or changed) and remove `removed` ones, as the runner
    does: one transaction each, the journal entry inside it."""
    stored = store.documents()
    writer = JournalWriter(store, stored)
    if removed:
        meta = writer.record(removed, [], ANALYZER) if journal else {}
        store.apply(GraphDelta(remove_doc_ids=list(removed), meta=meta))
    if written:
        changed = [d for d in written if d in stored]
        meta = writer.record(changed, written, ANALYZER) if journal else {}
        store.apply(
            GraphDelta(
                remove_doc_ids=changed,
                add=[(corpus.record(d), corpus.chunks(d)) for d in written],
                meta=meta,
            )
        )


def random_edit(corpus: RandomCorpus, store: GraphStore, *, journal: bool = True) -> str:
    r = corpus.rng
    ids = sorted(corpus.docs)
    added = [corpus.new_doc() for _ in range(r.randint(0, 2))]
    changed = r.sample(ids, min(len(ids), r.randint(0, 2)))
    for d in changed:
        corpus.change_doc(d)
    gone = [d for d in r.sample(ids, min(len(ids), r.randint(0, 2))) if d not in changed]
    for d in gone:
        del corpus.docs[d]
    write(store, corpus, [*added, *changed], gone, journal=journal)
    return f"+{len(added)} ~{len(changed)} -{len(gone)}"
