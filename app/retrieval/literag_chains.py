"""LiteRAG's reasoning chains: each kept path anchor → … → chunk written as titles joined by
the typed edge kinds between consecutive chunks, with each chunk's sentence closest to the
question, most relevant first, within a token budget."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.retrieval.base import Query, RetrievalContext
from graph.types import RELATED, ChunkView
from ingest.sentences import split_sentences

DIRECTED_INVERSE = {"CITES": "CITED_BY", "NEXT": "PREV"}
# Edge kinds shown in a chain, most telling first (at most LABELS_SHOWN per step).
LABEL_ORDER = (
    "CITES",
    "CITED_BY",
    "SHARES_ENTITY",
    "SAME_SECTION",
    "NEXT",
    "PREV",
    "UTILITY",
    "SEMANTIC",
    RELATED,
)
LABELS_SHOWN = 2
MAX_CHAINS = 8  # paths whose evidence is computed (the token budget may bind first)
EVIDENCE_CANDIDATES = 3  # most sentences of one chunk embedded to break an overlap tie
EVIDENCE_BATCH = 4  # most sentences embedded per query (later ties keep their first)
EVIDENCE_WORDS = 60
SENTENCE_CACHE = 4096


Path = tuple[list[str], list[tuple[str, ...]]]  # chunks, edge labels between consecutive ones


@dataclass(slots=True)
class Reach:
    """How a chunk was first kept: the path's anchor, the chunk it came from and the edge;
    `support` collects every anchor whose paths kept it."""

    node: str
    anchor: str
    parent: str | None
    hop: int
    relevance: float
    theta: float = 0.0
    labels: tuple[str, ...] = ()
    support: set[str] = field(default_factory=set)


def edge_labels(edges: Iterable[tuple[str, str, str, float]], src: str) -> tuple[str, ...]:
    """Typed kinds between a pair, read in the direction of travel from `src`, most telling
    first."""
    labels = {
        DIRECTED_INVERSE[k] if k in DIRECTED_INVERSE and a != src else k for k, a, _, _ in edges
    }
    return tuple(sorted(labels, key=LABEL_ORDER.index)) or (RELATED,)


def chain_paths(expanded: list[Reach], links: list[Reach]) -> list[Path]:
    """Each kept relation as its path from the anchor, most relevant last step first, one per
    set of chunks (A→B and B→A between two anchors are one relation)."""
    first = {r.node: r for r in expanded}
    best: dict[frozenset[str], tuple[float, list[str], list[tuple[str, ...]]]] = {}
    for r in expanded + links:
        nodes, labels = [r.node], [r.labels]
        cur = r.parent
        while cur is not None and cur not in nodes:
            nodes.append(cur)
            up = first.get(cur)
            if up is None:
                break
            labels.append(up.labels)
            cur = up.parent
        nodes.reverse()
        labels.reverse()
        key, s = frozenset(nodes), r.relevance
        if key not in best or (s, nodes) > best[key][:2]:
            best[key] = (s, nodes, labels)
    ordered = sorted(best.values(), key=lambda p: (-p[0], p[1]))
    return [(nodes, labels) for _, nodes, labels in ordered]


class ChainWriter:
    """Writes one retriever's chains. The vectors of the evidence sentences it embedded are
    kept (least recently used dropped past SENTENCE_CACHE) because embedding is what makes a
    chain costly (see `_evidence`)."""

    def __init__(self, engine: RetrievalContext) -> None:
        self.engine = engine
        self._sentence_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._sentence_lock = threading.Lock()

    def write(self, query: Query, paths: list[Path], budget: int) -> tuple[list[str], int]:
        """The chains of `paths`, in order, leaving out repeats and any chain that would take
        the total past `budget` tokens; and the tokens used."""
        ids = list(dict.fromkeys(c for nodes, _ in paths for c in nodes))
        views = {v.id: v for v in self.engine.store.get_chunks(ids)}
        titles = " ".join(v.title for v in views.values())
        evidence = self._evidence(query, [views[c] for c in ids if c in views], titles)
        chains: list[str] = []
        used = 0
        for nodes, labels in paths:
            if any(c not in views for c in nodes):
                continue
            steps = [_name(views[nodes[0]])]
            for label, node in zip(labels, nodes[1:], strict=True):
                steps.append(f"—{'+'.join(label[:LABELS_SHOWN])}→ {_name(views[node])}")
            quotes = " → ".join(f'"{evidence[c]}"' for c in nodes)
            chain = f"{' '.join(steps)}: {quotes}"
            cost = self.engine.query_model.count_tokens(chain)
            if chain in chains or used + cost > budget:
                continue
            chains.append(chain)
            used += cost
        return chains, used

    def _evidence(self, query: Query, views: Sequence[ChunkView], context: str) -> dict[str, str]:
        """Each chunk's sentence most similar to the question. The candidates are the
        sentences sharing most words with the question and the chain's titles (a chunk's
        relation to the next hop is usually stated in the sentence naming it); only ties are
        embedded, all chunks' in one batch, because embedding sentences is the one costly
        step of a LiteRAG query (≈10 ms a sentence on two busy cores)."""
        analyzer = self.engine.analyzer
        wanted = set(query.tokens) | set(analyzer.tokens(context))
        candidates: dict[str, list[str]] = {}
        room = EVIDENCE_BATCH
        for v in views:  # best chains' chunks first, so they get the embedding room
            # A chunk's own title is in its opening sentence, not in its relations.
            words = wanted - set(analyzer.tokens(v.title))
            sentences = split_sentences(v.text) or [v.text]
            overlap = [len(words & set(analyzer.tokens(s))) for s in sentences]
            top = max(overlap)
            ties = [s for s, n in zip(sentences, overlap, strict=True) if n == top]
            ties = ties[: min(EVIDENCE_CANDIDATES, room)] or ties[:1]
            room -= len(ties) if len(ties) > 1 else 0
            candidates[v.id] = ties
        ambiguous = list(dict.fromkeys(s for c in candidates.values() if len(c) > 1 for s in c))
        with self._sentence_lock:
            cache = self._sentence_vectors
            missing = [s for s in ambiguous if s not in cache]
            if missing:
                cache.update(zip(missing, self.engine.encode_queries(missing), strict=True))
            vectors = {s: cache[s] for s in ambiguous}
            for s in ambiguous:
                cache.move_to_end(s)
            while len(cache) > SENTENCE_CACHE:
                cache.popitem(last=False)
        out = {}
        for cid, sentences in candidates.items():
            best = sentences[0]
            if len(sentences) > 1:
                best = max(sentences, key=lambda s: float(vectors[s] @ query.embedding))
            words = best.split()
            cut = len(words) > EVIDENCE_WORDS
            out[cid] = " ".join(words[:EVIDENCE_WORDS]) + (" …" if cut else "")
        return out


def _name(view: ChunkView) -> str:
    """A chunk's title, with its part number when it is not the document's first chunk."""
    return view.title if view.ordinal == 0 else f"{view.title} §{view.ordinal + 1}"
