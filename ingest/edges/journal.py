"""The change journal: what happened to the corpus since the stored chunk edges were built.

Deleting a document deletes its chunks' edges with them, yet an update needs those edges
(who had the chunk in its top list) and the chunk's old facts (which entity and term
counts moved). So before a write removes documents, the runner snapshots their chunks here,
and the journal travels in the same store transaction as the removal (`GraphDelta.meta`): a
crash leaves either both or neither. The edge refresh consumes the journal in the same
transaction that writes the edge change, so re-running after any crash finds a consistent
pair (stored edges, journal).

`EdgeState` records what the stored edges were built for: the edge configuration and
builder version, the chunk count, and an order-independent sum of per-document digests.
The documents outside the journal must still sum to what they summed to then — otherwise
something changed the store without journaling it, and the refresh rebuilds in full.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from graph.base import GraphStore
from graph.types import ChunkEdge, DocumentRecord
from ingest.config import EdgeConfig
from ingest.edges.corpus import RemovedChunk
from ingest.edges.model import EDGE_BUILDER_VERSION
from ingest.tokens import Analyzer

JOURNAL_KEY = "chunk_edges_journal"
STATE_KEY = "chunk_edges_state"
_MASK = (1 << 64) - 1
# A change touching more documents than this share of the corpus is rebuilt in full: the
# journal stops recording details (an update would cost about as much as a build).
FULL_BUILD_SHARE = 0.25


def document_digest(doc: DocumentRecord) -> int:
    """Changes whenever a document is (re)written, even with the same content."""
    text = f"{doc.id}\0{doc.content_hash}\0{doc.ingested_at!r}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def digest_sum(docs: Iterable[DocumentRecord]) -> int:
    return sum(document_digest(d) for d in docs) & _MASK


def config_digest(cfg: EdgeConfig, analyzer: Analyzer) -> str:
    """Everything besides the corpus that the stored edges and states depend on: the edge
    settings, the builder version, and the analyzer (question terms are cached per chunk)."""
    text = json.dumps(
        {
            "edges": cfg.model_dump(mode="json"),
            "tokens": analyzer.cfg.model_dump(mode="json"),
            "stopwords": sorted(analyzer._stop),
            "version": EDGE_BUILDER_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(slots=True)
class EdgeState:
    """`questions`: the chunks that have utility questions (UTILITY's corpus size, which
    an update over an indexed corpus cannot count; None in a state an older neorag wrote)."""

    config: str
    doc_sum: int
    chunks: int
    questions: int | None = None

    @classmethod
    def load(cls, store: GraphStore) -> EdgeState | None:
        raw = store.get_meta(STATE_KEY)
        if not raw:
            return None
        d = json.loads(raw)
        questions = d.get("questions")
        return cls(
            d["config"],
            int(d["doc_sum"], 16),
            int(d["chunks"]),
            None if questions is None else int(questions),
        )

    def dumps(self) -> str:
        return json.dumps(
            {
                "config": self.config,
                "doc_sum": f"{self.doc_sum:016x}",
                "chunks": self.chunks,
                "questions": self.questions,
            }
        )


@dataclass(slots=True)
class EdgeJournal:
    """`docs`: every document written or removed since the build, with the digest it had
    then (None: it did not exist). `removed`: snapshots of the chunks that had edges then."""

    docs: dict[str, int | None] = field(default_factory=dict)
    removed: dict[str, RemovedChunk] = field(default_factory=dict)
    overflow: bool = False

    @property
    def empty(self) -> bool:
        return not (self.docs or self.removed or self.overflow)

    @classmethod
    def load(cls, store: GraphStore) -> EdgeJournal:
        raw = store.get_meta(JOURNAL_KEY)
        if not raw:
            return cls()
        d = json.loads(raw)
        if d.get("overflow"):
            return cls(overflow=True)
        return cls(
            docs={k: None if v is None else int(v, 16) for k, v in d["docs"].items()},
            removed={k: RemovedChunk.from_json(k, v) for k, v in d["removed"].items()},
        )

    def dumps(self) -> str:
        if self.overflow:
            return json.dumps({"overflow": True})
        return json.dumps(
            {
                "docs": {k: None if v is None else f"{v:016x}" for k, v in self.docs.items()},
                "removed": {k: r.as_json() for k, r in self.removed.items()},
            },
            separators=(",", ":"),
        )

    def consistent(self, state: EdgeState, docs: Mapping[str, DocumentRecord]) -> bool:
        """Whether every document outside the journal is as it was at the build."""
        outside = digest_sum(d for doc_id, d in docs.items() if doc_id not in self.docs)
        before = state.doc_sum - sum(v for v in self.docs.values() if v is not None)
        return outside == before & _MASK


class JournalWriter:
    """Keeps the journal across the write batches of one ingest and hands each batch the
    meta entry to store with it. Does nothing while no edges are stored (the refresh will
    build in full anyway)."""

    def __init__(self, store: GraphStore, stored_docs: Mapping[str, DocumentRecord]) -> None:
        self.store = store
        self.stored_docs = stored_docs
        self.active = EdgeState.load(store) is not None
        self.journal = EdgeJournal.load(store) if self.active else EdgeJournal()

    def record(
        self, removed_doc_ids: Iterable[str], added_doc_ids: Iterable[str], analyzer: Analyzer
    ) -> dict[str, str]:
        if not self.active:
            return {}
        j = self.journal
        removed_doc_ids, added_doc_ids = list(removed_doc_ids), list(added_doc_ids)
        if not j.overflow:
            # A document already journaled holds chunks written since the build: no edges.
            built = [d for d in removed_doc_ids if d not in j.docs]
            for doc_id in [*removed_doc_ids, *added_doc_ids]:
                old = self.stored_docs.get(doc_id)
                j.docs.setdefault(doc_id, None if old is None else document_digest(old))
            if len(j.docs) > FULL_BUILD_SHARE * max(len(self.stored_docs), 1) + 8:
                self.journal = EdgeJournal(overflow=True)
            elif built:
                self._snapshot(built, analyzer)
        return {JOURNAL_KEY: self.journal.dumps()}

    def rebuild_all(self) -> None:
        """A change no journal entry can describe is coming (every embedding, say): the
        next edge refresh builds in full. Stored at once, before that change writes."""
        self.journal = EdgeJournal(overflow=True)
        if self.active:
            self.store.set_meta(JOURNAL_KEY, self.journal.dumps())

    def _snapshot(self, doc_ids: list[str], analyzer: Analyzer) -> None:
        chunks = self.store.document_chunks(doc_ids)
        edges: dict[str, list[ChunkEdge]] = defaultdict(list)
        ids = {c.id for c in chunks}
        for e in self.store.neighbours(sorted(ids)):
            for end in {e.src, e.dst} & ids:
                edges[end].append(e)
        for c in chunks:
            self.journal.removed.setdefault(c.id, RemovedChunk.of(c, edges[c.id], analyzer))
