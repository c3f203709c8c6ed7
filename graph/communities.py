"""Community summaries shared by both backends: sizes, top tokens, and the sanity guard.

GDS Leiden has been seen returning far more communities than the graph supports (every
node alone, or thousands of singletons); `guard` turns such a result into a warning the
ingest report shows, next to the modularity.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from graph.types import CommunityRecord, TermMatrix

TOP_TOKENS = 8


def summarize(
    assignment: dict[str, int], terms: TermMatrix, top_n: int = TOP_TOKENS
) -> list[CommunityRecord]:
    """Each community's size and its most characteristic tokens (summed tf·idf)."""
    sizes = Counter(assignment.values())
    if not sizes:
        return []
    row = {cid: i for i, cid in enumerate(terms.chunk_ids)}
    tf = terms.tf.tocsr()
    n_chunks = max(tf.shape[0], 1)
    df = np.bincount(tf.indices, minlength=tf.shape[1]) if tf.nnz else np.zeros(tf.shape[1])
    idf = np.log((1 + n_chunks) / (1 + df)) + 1.0
    members: dict[int, list[int]] = {}
    for chunk, community in assignment.items():
        if chunk in row:
            members.setdefault(community, []).append(row[chunk])
    out = []
    for community in sorted(sizes):
        rows = members.get(community, [])
        top: tuple[str, ...] = ()
        if rows and tf.shape[1]:
            weights = np.asarray(tf[rows].sum(axis=0)).ravel() * idf
            k = min(top_n, int((weights > 0).sum()))
            if k:
                best = np.argsort(-weights, kind="stable")[:k]
                top = tuple(terms.vocabulary[j] for j in best)
        out.append(CommunityRecord(community, 0, sizes[community], top))
    return out


def guard(n_nodes: int, n_communities: int, modularity: float) -> list[str]:
    warnings = []
    if n_nodes >= 20 and n_communities > max(10, n_nodes // 3):
        warnings.append(
            f"Leiden found {n_communities} communities for {n_nodes} chunks "
            f"(modularity {modularity:.3f}); the chunk graph may be too sparse (lower "
            "NEORAG_INGEST__EDGES__TAU or raise semantic_k)"
        )
    if n_nodes >= 20 and modularity < 0.1:
        warnings.append(f"low Leiden modularity {modularity:.3f}: communities carry little signal")
    return warnings
