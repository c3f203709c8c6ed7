"""A token graph's kept edge list carried forward by recorded changes equals the edge list
of the changed graph read in full (graph/token_changes.py)."""

from __future__ import annotations

import random

import numpy as np

from graph.token_changes import TokenEdges, follow

MIN_WEIGHT = 2


def _edges(weights: dict[tuple[str, str], int], names: list[str]) -> TokenEdges:
    rows = [{"a": a, "b": b, "weight": w} for (a, b), w in weights.items() if w >= MIN_WEIGHT]
    return TokenEdges.from_rows(names, rows)


def _as_set(edges: TokenEdges) -> set[tuple[str, str, float]]:
    n = edges.names
    return {(n[a], n[b], float(w)) for a, b, w in zip(edges.a, edges.b, edges.w, strict=True)}


def _pair(rng: random.Random, vocabulary: list[str]) -> tuple[str, str]:
    a, b = rng.sample(vocabulary, 2)
    return (a, b) if a < b else (b, a)


def test_changes_give_the_graph_a_full_read_gives() -> None:
    rng = random.Random(7)
    vocabulary = [f"t{i:03d}" for i in range(120)]
    weights = {_pair(rng, vocabulary[:80]): rng.randint(1, 4) for _ in range(600)}
    names = sorted({t for pair in weights for t in pair})
    edges = _edges(weights, names)
    changes = []
    for version in range(3):  # pairs cross min_weight both ways, vanish, appear with new tokens
        change: dict[str, list] = {"a": [], "b": [], "w": [], "tokens": []}
        for _ in range(40):
            pair = _pair(rng, vocabulary)
            weights[pair] = max(0, weights.get(pair, 0) + rng.choice([-2, -1, 1, 2]))
            change["a"].append(pair[0])
            change["b"].append(pair[1])
            change["w"].append(weights[pair])
        change["tokens"] = [f"lone{version}"]  # a token of a chunk with no pair
        # the store deletes a token no pair of weight > 0 holds (and no other chunk)
        held = {t for p, w in weights.items() if w > 0 for t in p}
        change["gone"] = sorted({*change["a"], *change["b"]} - held)
        changes.append(change)
    got = follow(edges, changes, MIN_WEIGHT)
    held = {t for p, w in weights.items() if w > 0 for t in p} | {"lone0", "lone1", "lone2"}
    full = _edges(weights, sorted(held))
    assert _as_set(got) == _as_set(full)
    assert got.names == sorted(held)
    assert got.a.dtype == np.int32 and got.w.dtype == np.float64


def test_no_change_keeps_the_edges() -> None:
    weights = {("a", "b"): 3, ("a", "c"): 1, ("b", "c"): 2}
    edges = _edges(weights, ["a", "b", "c"])
    got = follow(edges, [], MIN_WEIGHT)
    assert _as_set(got) == _as_set(edges) and got.names == ["a", "b", "c"]


def test_a_later_change_of_the_same_pair_wins() -> None:
    edges = _edges({("a", "b"): 2}, ["a", "b"])
    changes = [{"a": ["a"], "b": ["b"], "w": [5]}, {"a": ["a"], "b": ["b"], "w": [0]}]
    assert _as_set(follow(edges, changes, MIN_WEIGHT)) == set()
