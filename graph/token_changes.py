"""A token graph's edge list carried forward by the changes a store recorded since.

A query process that copied the token graph at one version follows a one-document change
by applying what the change recorded (each pair it touched, with its weight after the
change, and the tokens it added: `cypher/record_token_graph_change.cypher`) to the edge list
it kept, instead of reading every pair again: the work is the edge list's size in NumPy,
not a read of millions of relationships over the network. The result is the graph a full
read of the new version gives, tokens and pairs alike (tests/graph/test_token_changes.py):
a token the change deleted (no chunk holds it any more) leaves the names too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class TokenEdges:
    """The stored pairs of a token graph over `names` (sorted): each pair once, in the
    direction it is stored (`a` the token whose text sorts first), with its weight."""

    names: list[str]
    a: np.ndarray  # int32 rows into names
    b: np.ndarray
    w: np.ndarray  # float64

    @classmethod
    def from_rows(cls, names: list[str], rows: Sequence[Mapping[str, Any]]) -> TokenEdges:
        index = {t: i for i, t in enumerate(names)}
        a = np.fromiter((index[r["a"]] for r in rows), np.int32, len(rows))
        b = np.fromiter((index[r["b"]] for r in rows), np.int32, len(rows))
        w = np.fromiter((r["weight"] for r in rows), np.float64, len(rows))
        return cls(names, a, b, w)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"edge_a": self.a, "edge_b": self.b, "edge_w": self.w}

    @classmethod
    def from_arrays(cls, names: list[str], arrays: Mapping[str, np.ndarray]) -> TokenEdges | None:
        """The edges `arrays()` kept, or None when they were not kept (an older copy)."""
        if not {"edge_a", "edge_b", "edge_w"} <= set(arrays):
            return None
        return cls(names, arrays["edge_a"], arrays["edge_b"], arrays["edge_w"])


def follow(edges: TokenEdges, changes: Iterable[Mapping[str, Any]], min_weight: int) -> TokenEdges:
    """`edges` after `changes` (in version order; each `{a, b, w, tokens, gone}` lists): a
    pair takes the weight its last change gives it and is kept at `min_weight` or more; a
    token is held or gone as its last change says."""
    latest: dict[tuple[str, str], float] = {}
    held: dict[str, bool] = {}  # token -> whether the store holds it after the last change
    for change in changes:
        held.update((t, False) for t in change.get("gone") or ())
        held.update((t, True) for t in change.get("tokens") or ())
        for pair, w in zip(zip(change["a"], change["b"], strict=True), change["w"], strict=True):
            latest[pair] = w
            if w > 0:  # a pair the store holds: both its tokens are held
                held.update(dict.fromkeys(pair, True))
    kept = {pair: float(w) for pair, w in latest.items() if w >= min_weight}
    names, a, b = edges.names, np.asarray(edges.a), np.asarray(edges.b)
    gone = {t for t, there in held.items() if not there}
    fresh = {t for t, there in held.items() if there}.difference(names)
    if fresh or gone.intersection(names):
        merged = sorted({*names, *fresh} - gone)
        position = {t: i for i, t in enumerate(merged)}
        moved = np.fromiter((position.get(t, -1) for t in names), np.int64, len(names))
        names, a, b = merged, moved[a], moved[b]
    index = {t: i for i, t in enumerate(names)}
    n = np.int64(len(names))
    known = [(index[x], index[y]) for x, y in latest if x in index and y in index]
    touched = np.asarray([i * n + j for i, j in known], dtype=np.int64)
    # a pair of a deleted token went to weight 0 in the same change: no edge keeps one
    stays = ~np.isin(a.astype(np.int64) * n + b, touched) & (a >= 0) & (b >= 0)
    new_a = np.fromiter((index[x] for x, _ in kept), np.int64, len(kept))
    new_b = np.fromiter((index[y] for _, y in kept), np.int64, len(kept))
    new_w = np.fromiter(kept.values(), np.float64, len(kept))
    return TokenEdges(
        names,
        np.concatenate([a[stays], new_a]).astype(np.int32),
        np.concatenate([b[stays], new_b]).astype(np.int32),
        np.concatenate([np.asarray(edges.w)[stays], new_w]),
    )
