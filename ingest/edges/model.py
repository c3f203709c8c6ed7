"""The typed results every edge-kind module returns, and the chunk facts they read.

An edge is keyed by `(src, dst)`: the sorted pair for the symmetric kinds, the direction for
NEXT (earlier → later chunk) and CITES (citing chunk → the cited document's first chunk).
`build` entry points return a `KindEdges` (every edge of the kind over the whole corpus);
`update` entry points return a `KindChange` (the edges to delete and to write so the stored
kind equals what `build` would give on the changed corpus).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.types import ChunkEdge

# Part of the edge state: bump when a builder changes what it produces, so stored edges are
# rebuilt in full on the next ingest.
EDGE_BUILDER_VERSION = 4  # 4: SEMANTIC quantises the dense index's float32 unit rows

EdgeKey = tuple[str, str]
# The key (score, partner id) of a chunk's kth-best partner in a top-k kind, or None when the
# chunk has fewer than k partners above the kind's floor (then every partner is in its list).
Kth = tuple[float, str] | None


def pair(a: str, b: str) -> EdgeKey:
    return (a, b) if a < b else (b, a)


@dataclass(slots=True)
class KindEdges:
    """All edges of one kind, and for top-k kinds each member chunk's kth key (the state an
    exact update needs to decide whether a new partner enters that chunk's list)."""

    kind: str
    weights: dict[EdgeKey, float] = field(default_factory=dict)
    kth: dict[str, Kth] | None = None

    def edges(self) -> list[ChunkEdge]:
        return [ChunkEdge(self.kind, a, b, w) for (a, b), w in sorted(self.weights.items())]


@dataclass(slots=True)
class KindChange:
    """What an update changes in one kind: keys to delete, keys to (re)write with their new
    weight, and the new kth key of every top-k member it recomputed (None values included)."""

    kind: str
    deleted: set[EdgeKey] = field(default_factory=set)
    written: dict[EdgeKey, float] = field(default_factory=dict)
    kth: dict[str, Kth] = field(default_factory=dict)

    @property
    def touched(self) -> set[EdgeKey]:
        return self.deleted | set(self.written)


def diff(
    kind: str,
    stored: dict[EdgeKey, float],
    new: dict[EdgeKey, float],
    gone: dict[EdgeKey, float] | None = None,
) -> KindChange:
    """The change turning the `stored` edges of some region into the `new` ones. `gone`
    edges (the removed chunks' edges, which the store deleted with them) are deleted again,
    harmlessly, and never count as present: a chunk re-added under the same id needs its
    edges written even when they equal the old ones."""
    return KindChange(
        kind,
        deleted=(set(stored) | set(gone or ())) - set(new),
        written={k: w for k, w in new.items() if stored.get(k) != w},
    )
