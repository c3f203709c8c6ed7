"""Symmetrised top-k kinds (SEMANTIC, UTILITY, SHARES_ENTITY): one build, one exact update.

Such a kind scores chunk pairs with a symmetric score s(x, y). A chunk's partners are the
chunks scoring at least the kind's floor; its list is the first k partners in the order
(−s, partner id); the kind keeps the pair {x, y} when either chunk has the other in its list,
weighted by a function of s. Besides its edges, every member chunk stores its kth key (the
(score, id) of its kth partner, or None with fewer than k partners).

An update receives the dirty chunks (new ones, and survivors whose score to anybody may have
changed) and the old edges of the removed chunks. A survivor's list can change only if
(a) it held a removed or dirty chunk — then the stored edge between them says so — or
(b) a dirty chunk now scores into it — its stored kth key says so. Exactly those chunks and
the dirty ones get their lists recomputed against the whole current corpus; every other
list is unchanged, so an edge from a recomputed chunk to an unchanged one stays exactly when
the unchanged chunk's kth key admits it. Nothing outside these chunks' edges is touched.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from ingest.edges.model import EdgeKey, KindChange, KindEdges, Kth, diff, pair
from ingest.edges.stored import StoredEdges, StoredStates


class StateMissing(RuntimeError):
    """A chunk the update must trust has no stored kth key: the stored state is not the one
    the edges were built with, so only a full build is safe."""


class ScoreSpace(Protocol):
    def __contains__(self, chunk_id: object) -> bool: ...

    def partners(self, ids: Sequence[str]) -> dict[str, dict[str, float]]:
        """Every partner of each chunk (score at least the floor, not itself), exactly."""
        ...

    def tops(self, k: int) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
        """Every member's list and kth key (the full build)."""
        ...


def top_of(partners: dict[str, float], k: int) -> tuple[list[tuple[str, float]], Kth]:
    ranked = heapq.nsmallest(k, partners.items(), key=lambda p: (-p[1], p[0]))
    kth = (ranked[-1][1], ranked[-1][0]) if len(partners) >= k and ranked else None
    return ranked, kth


def admits(kth: Kth, score: float, partner: str) -> bool:
    """Whether a list whose kth key is `kth` holds (or would take) `partner` at `score`."""
    return kth is None or (-score, partner) <= (-kth[0], kth[1])


def tops_from_partners(
    space: ScoreSpace, members: Sequence[str], k: int, batch: int = 256
) -> Iterator[tuple[str, list[tuple[str, float]], Kth]]:
    for start in range(0, len(members), batch):
        rows = space.partners(members[start : start + batch])
        for x in members[start : start + batch]:
            top, kth = top_of(rows[x], k)
            yield x, top, kth


def build(space: ScoreSpace, kind: str, k: int, weight: Callable[[float], float]) -> KindEdges:
    out = KindEdges(kind, kth={})
    assert out.kth is not None
    for x, top, kth in space.tops(k):
        out.kth[x] = kth
        for y, s in top:
            out.weights[pair(x, y)] = weight(s)
    return out


def update(
    space: ScoreSpace,
    kind: str,
    k: int,
    weight: Callable[[float], float],
    dirty: set[str],
    gone: dict[EdgeKey, float],
    stored: StoredEdges,
    states: StoredStates,
) -> KindChange:
    """The change making the stored kind equal `build` on the current corpus. `gone` holds
    the old edges of the removed chunks (no longer in the store)."""
    dirty_members = sorted(c for c in dirty if c in space)
    rows = space.partners(dirty_members)
    recompute = set(dirty_members)
    for a, b in gone:
        recompute.update((a, b))
    for v in dirty_members:
        recompute.update(stored.partners(v, kind))
    states.load(x for v in dirty_members for x in rows[v] if x not in recompute)
    for v in dirty_members:
        for x, s in rows[v].items():
            if x in recompute:
                continue
            state = states.of(x)
            if kind not in state or admits(state[kind], s, v):
                recompute.add(x)
    recompute = {x for x in recompute if x in space}
    rows.update(space.partners(sorted(recompute - set(dirty_members))))

    new: dict[EdgeKey, float] = {}
    kths: dict[str, Kth] = {}
    for x in sorted(recompute):
        top, kths[x] = top_of(rows[x], k)
        for y, s in top:
            new[pair(x, y)] = weight(s)
    old = stored.around(sorted(recompute), kind)
    unchanged_ends = {y for key in old for y in key if y not in recompute and y in space}
    states.load(unchanged_ends)
    for a, b in old:
        for x, y in ((a, b), (b, a)):
            if x not in recompute or y not in unchanged_ends:
                continue
            s = rows[x].get(y)
            if s is None:
                continue
            state = states.of(y)
            if kind not in state:
                raise StateMissing(f"{kind}: chunk {y} has no stored kth key")
            if admits(state[kind], s, x):
                new[pair(x, y)] = weight(s)
    change = diff(kind, old, new, gone)
    change.kth = kths
    return change
