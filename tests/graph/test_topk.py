"""`top_stable` keeps exactly what a stable full sort puts first (ties by position)."""

from __future__ import annotations

import numpy as np

from graph.topk import top_stable


def test_top_stable_equals_the_stable_sort_prefix() -> None:
    rng = np.random.default_rng(0)
    for trial in range(2000):
        n, m = int(rng.integers(0, 60)), int(rng.integers(0, 70))
        scores = rng.integers(0, 5, n).astype(float)  # many ties
        among = np.flatnonzero(rng.random(n) < 0.7) if trial % 2 else None
        rows = np.arange(n) if among is None else among
        want = rows[np.argsort(-scores[rows], kind="stable")][:m]
        assert np.array_equal(top_stable(scores, m, among), want)
