"""All seven kinds at once: a full build from the corpus, or an update from the change.

The order is the order of the ingest report: the six typed kinds, then RELATED, whose update
needs the others' changes.
"""

from __future__ import annotations

from graph.types import RELATED
from ingest.config import EdgeConfig
from ingest.edges import cites, related, semantic, shares_entity, utility, within_document
from ingest.edges.corpus import CorpusChange, EdgeCorpus
from ingest.edges.model import KindChange, KindEdges
from ingest.edges.stored import ChunkState, StoredEdges, StoredStates
from ingest.tokens import Analyzer

TOP_K_KINDS = (semantic.KIND, shares_entity.KIND, utility.KIND)


def build_all(corpus: EdgeCorpus, cfg: EdgeConfig, analyzer: Analyzer) -> dict[str, KindEdges]:
    kinds = {
        semantic.KIND: semantic.build(corpus, cfg),
        within_document.NEXT: within_document.build_next(corpus),
        within_document.SAME_SECTION: within_document.build_same_section(corpus, cfg),
        shares_entity.KIND: shares_entity.build(corpus, cfg),
        cites.KIND: cites.build(corpus, analyzer),
        utility.KIND: utility.build(corpus, cfg),
    }
    kinds[RELATED] = related.build(kinds, cfg)
    return kinds


def full_build_needed(change: CorpusChange) -> str | None:
    """Why this change cannot be applied locally, if it cannot."""
    if shares_entity.needs_full_build(change):
        return "the rounded chunk count moved (SHARES_ENTITY idf)"
    if utility.needs_full_build(change):
        return "the rounded count of chunks with questions moved (UTILITY idf)"
    return None


def update_all(
    change: CorpusChange,
    cfg: EdgeConfig,
    analyzer: Analyzer,
    stored: StoredEdges,
    states: StoredStates,
) -> dict[str, KindChange]:
    changes = {
        semantic.KIND: semantic.update(change, cfg, stored, states),
        within_document.NEXT: within_document.update_next(change, stored),
        within_document.SAME_SECTION: within_document.update_same_section(change, cfg, stored),
        shares_entity.KIND: shares_entity.update(change, cfg, stored, states),
        cites.KIND: cites.update(change, analyzer, stored),
        utility.KIND: utility.update(change, cfg, stored, states),
    }
    changes[RELATED] = related.update(changes, change, cfg, stored)
    return changes


def states_of_build(kinds: dict[str, KindEdges], corpus: EdgeCorpus) -> dict[str, ChunkState]:
    """Per chunk, the kth key of every top-k kind it belongs to, and its question terms."""
    out = {c.id: ChunkState(terms=state_terms(corpus, c.id)) for c in corpus.chunks}
    for kind in TOP_K_KINDS:
        for cid, kth in (kinds[kind].kth or {}).items():
            out[cid].kth[kind] = kth
    return out


def state_terms(corpus: EdgeCorpus, chunk_id: str) -> dict[str, int] | None:
    counts = corpus.terms.get(chunk_id)
    return None if counts is None else dict(counts)
