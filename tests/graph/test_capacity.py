"""The memory check before a projection: counts and GDS estimates from the real server,
and the refusal rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings
from graph.neo4j.capacity import (
    ProjectionEstimate,
    ProjectionTooLarge,
    available_heap,
    check_projection_fits,
    estimate_graph,
    estimate_projection,
    refuse_unless_fits,
)
from ingest.runner import run_ingest
from tests.ingest.corpora import write_corpus


@pytest.mark.neo4j
def test_estimates_count_what_the_projection_then_holds(neo4j_store, tmp_path: Path) -> None:
    settings = Settings()
    root = tmp_path / "docs"
    write_corpus(root, "A")
    run_ingest(root, neo4j_store, settings.ingest, settings.algorithms, tmp_path / "idx")
    min_weight = settings.algorithms.token_min_weight
    for kind, weight in (("tokens", min_weight), ("chunks", 1)):
        estimate = estimate_projection(neo4j_store, kind, weight)
        projected = neo4j_store.gds.client.graph.get(
            neo4j_store.gds.projection(kind, min_weight=weight)
        )
        assert (estimate.nodes, estimate.relationships) == (
            projected.node_count(),
            projected.relationship_count(),
        )
        assert 0 < estimate.bytes_min <= estimate.bytes_max
    assert check_projection_fits(neo4j_store, "tokens", min_weight).nodes > 0
    assert available_heap(neo4j_store) > 0
    small, big = (
        estimate_graph(neo4j_store, 10**3, 10**4),
        estimate_graph(neo4j_store, 10**6, 10**7),
    )
    assert big[0] > 100 * small[0]  # grows with the graph: what the capacity model extrapolates


def test_a_projection_that_cannot_fit_is_refused_with_the_fix() -> None:
    estimate = ProjectionEstimate("tokens", 5_000_000, 90_000_000, 3 * 2**30, 4 * 2**30)
    refuse_unless_fits(estimate, 3 * 2**30, "docs")  # exactly fits: allowed
    with pytest.raises(ProjectionTooLarge, match=r"'docs'.*tokens.*heap.*NEO4J_HEAP"):
        refuse_unless_fits(estimate, 2 * 2**30, "docs")
