"""Edges inside one document: NEXT (consecutive chunks, earlier → later, weight 1) and
SAME_SECTION (weight 1 for the same heading path, 0.5 for a shared parent heading, between
chunks at most `section_max_chunks` ordinals apart).

Both depend on one document's chunks only, and a changed document's chunks are all new, so
an update recomputes the changed documents and nothing else.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

from graph.types import ChunkRecord
from ingest.config import EdgeConfig
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.model import EdgeKey, KindChange, KindEdges, diff, pair
from ingest.edges.stored import StoredEdges

NEXT, SAME_SECTION = "NEXT", "SAME_SECTION"


def _by_document(chunks: Sequence[ChunkRecord]) -> list[list[ChunkRecord]]:
    groups: dict[str, list[ChunkRecord]] = defaultdict(list)
    for c in chunks:
        groups[c.doc_id].append(c)
    return [sorted(cs, key=lambda c: c.ordinal) for _, cs in sorted(groups.items())]


def next_weights(chunks: Sequence[ChunkRecord]) -> dict[EdgeKey, float]:
    return {(a.id, b.id): 1.0 for doc in _by_document(chunks) for a, b in itertools.pairwise(doc)}


def same_section_weights(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> dict[EdgeKey, float]:
    best: dict[EdgeKey, float] = {}
    for doc in _by_document([c for c in chunks if c.section_path]):
        for i, a in enumerate(doc):
            for b in doc[i + 1 :]:
                if b.ordinal - a.ordinal > cfg.section_max_chunks:
                    break
                if a.section_path == b.section_path:
                    w = 1.0
                elif len(a.section_path) > 1 and a.section_path[:-1] == b.section_path[:-1]:
                    w = 0.5
                else:
                    continue
                key = pair(a.id, b.id)
                best[key] = max(best.get(key, 0.0), w)
    return best


def build_next(corpus: EdgeCorpus) -> KindEdges:
    return KindEdges(NEXT, next_weights(corpus.chunks))


def build_same_section(corpus: EdgeCorpus, cfg: EdgeConfig) -> KindEdges:
    return KindEdges(SAME_SECTION, same_section_weights(corpus.chunks, cfg))


def _update(
    kind: str, new: dict[EdgeKey, float], change: CorpusChange, stored: StoredEdges
) -> KindChange:
    return diff(kind, stored.around(sorted(change.added_ids), kind), new, change.old_edges(kind))


def update_next(change: CorpusChange, stored: StoredEdges) -> KindChange:
    return _update(NEXT, next_weights(change.added), change, stored)


def update_same_section(change: CorpusChange, cfg: EdgeConfig, stored: StoredEdges) -> KindChange:
    return _update(SAME_SECTION, same_section_weights(change.added, cfg), change, stored)
