"""The embedded PageRank is GDS 2.13's PageRank: 60 random configurations (graph, sources,
damping, supersteps, tolerance, weighted or not) against the real server, scores equal to
1e-12. The README's claim rests on this test."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from scipy import sparse

import cypher
from graph.algorithms.ppr import personalized_pagerank
from graph.config import AlgorithmConfig

CONFIGURATIONS = 60
TOLERANCE = 1e-12


def random_case(rng: np.random.Generator) -> dict:
    n = int(rng.integers(4, 40))
    m = int(rng.integers(n, 4 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = np.round(rng.uniform(0.1, 5.0, m), 3)
    edges = {}
    for a, b, w in zip(src, dst, weights, strict=True):
        if a != b:
            edges[(int(min(a, b)), int(max(a, b)))] = float(w)
    present = sorted({v for pair in edges for v in pair})
    picks = rng.choice(present, size=min(len(present), int(rng.integers(1, 4))), replace=False)
    return {
        "edges": [[a, b, w] for (a, b), w in sorted(edges.items())],
        "sources": sorted(int(x) for x in picks),
        "damping": float(np.round(rng.uniform(0.5, 0.95), 3)),
        "max_iterations": int(rng.integers(1, 40)),
        "tolerance": float(rng.choice([1e-7, 1e-5, 1e-3, 1e-2])),
        "weighted": bool(rng.integers(0, 2)),
    }


@pytest.mark.neo4j
def test_embedded_pagerank_equals_gds_on_random_configurations(neo4j_store) -> None:
    rng = np.random.default_rng(2013)
    run = neo4j_store.driver.execute_query
    worst = 0.0
    for _ in range(CONFIGURATIONS):
        case = random_case(rng)
        if not case["edges"]:
            continue
        name = f"neorag_ppr_check_{uuid.uuid4().hex[:10]}"
        run(cypher.load("ppr_check_project"), name=name, edges=case["edges"])
        try:
            records, _, _ = run(
                cypher.load("ppr_check_stream"),
                name=name,
                sources=case["sources"],
                damping=case["damping"],
                max_iterations=case["max_iterations"],
                tolerance=case["tolerance"],
                weight="weight" if case["weighted"] else None,
            )
        finally:
            run(cypher.load("gds_graph_drop"), name=name)
        gds = {int(r["nodeId"]): float(r["score"]) for r in records}
        nodes = sorted(gds)
        index = {v: i for i, v in enumerate(nodes)}
        a, b, w = (np.array([e[k] for e in case["edges"]]) for k in range(3))
        upper = sparse.coo_matrix(
            (w, ([index[int(x)] for x in a], [index[int(x)] for x in b])),
            shape=(len(nodes), len(nodes)),
        )
        cfg = AlgorithmConfig(
            ppr_damping=case["damping"],
            ppr_max_iterations=case["max_iterations"],
            ppr_tolerance=case["tolerance"],
        )
        ours = personalized_pagerank(
            (upper + upper.T).tocsr(),
            {index[s]: 1.0 for s in case["sources"] if s in index},
            cfg,
            weighted=case["weighted"],
        )
        diff = max(abs(ours[index[v]] - gds[v]) for v in nodes)
        worst = max(worst, diff)
        assert diff <= TOLERANCE, (case, diff)
    print(f"worst absolute difference over {CONFIGURATIONS} configurations: {worst:.3g}")
    assert worst <= TOLERANCE
