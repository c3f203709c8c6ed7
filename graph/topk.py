"""The first m positions of a score vector in (score descending, position ascending) order,
exactly what a stable full sort would put first, in O(n + m log m) instead of O(n log n):
the hot rankings (TIGRAG's candidate pool, the bridge walk) sort vectors as long as the
collection while keeping a hundred entries."""

from __future__ import annotations

import numpy as np


def top_stable(scores: np.ndarray, m: int, among: np.ndarray | None = None) -> np.ndarray:
    """Positions (into `scores`, drawn from `among` when given, in increasing order) of the
    `m` highest scores, ties broken by lower position."""
    rows = np.arange(len(scores)) if among is None else among
    values = scores[rows]
    if m <= 0 or len(rows) == 0:
        return rows[:0]
    if len(rows) > m:
        kth = np.partition(values, len(rows) - m)[len(rows) - m]
        above = values > kth
        tied = np.flatnonzero(values == kth)[: m - int(above.sum())]
        keep = np.flatnonzero(above)
        keep = np.sort(np.concatenate([keep, tied]))
        rows, values = rows[keep], values[keep]
    return rows[np.lexsort((rows, -values))]
