"""Memory checks before a GDS projection, and the estimates the capacity model uses.

GDS guards its native projections and its algorithms against the free heap, but not
Cypher-aggregation projections, which neorag uses to give every collection its own
graphs: an oversized one runs until the server's heap is gone, for every collection on
it. So before projecting, neorag counts what the projection would hold, asks GDS for its
estimate (`gds.graph.project.estimate` over a fictitious graph of those counts) and
refuses, with the numbers and the fix, when even the estimate's lower bound does not fit
in the heap that the catalog's graphs leave. On a cluster this runs on the member that
projects (the writer, or a dedicated GDS secondary), like the projection itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.errors import NeoragError

if TYPE_CHECKING:
    from graph.neo4j.queries import NamedQueries

SIZE_QUERIES = {"tokens": "projection_size_tokens", "chunks": "projection_size_chunks"}


class ProjectionTooLarge(NeoragError):
    pass


@dataclass(frozen=True, slots=True)
class ProjectionEstimate:
    kind: str
    nodes: int
    relationships: int
    bytes_min: int
    bytes_max: int

    def as_dict(self) -> dict[str, int | str]:
        return {
            "kind": self.kind,
            "nodes": self.nodes,
            "relationships": self.relationships,
            "bytes_min": self.bytes_min,
            "bytes_max": self.bytes_max,
        }


def estimate_graph(store: NamedQueries, nodes: int, relationships: int) -> tuple[int, int]:
    """GDS's (min, max) bytes for a weighted graph of that many nodes and relationships."""
    [row] = store.gds_query("projection_estimate", nodes=nodes, relationships=relationships)
    return int(row["bytesMin"]), int(row["bytesMax"])


def estimate_projection(store: NamedQueries, kind: str, min_weight: int = 1) -> ProjectionEstimate:
    """What projecting this collection's `tokens` or `chunks` graph now would need."""
    [size] = store.read(SIZE_QUERIES[kind], min_weight=min_weight)
    nodes, relationships = int(size["nodes"]), int(size["relationships"])
    low, high = estimate_graph(store, nodes, relationships)
    return ProjectionEstimate(kind, nodes, relationships, low, high)


def available_heap(store: NamedQueries) -> int:
    """The heap ceiling minus what the GDS catalog's graphs already hold."""
    [row] = store.gds_query("heap_capacity")
    return int(row["max_heap"]) - max(int(row["catalog_bytes"] or 0), 0)


def check_projection_fits(
    store: NamedQueries, kind: str, min_weight: int = 1
) -> ProjectionEstimate:
    """The estimate, or ProjectionTooLarge when its lower bound exceeds the heap left."""
    estimate = estimate_projection(store, kind, min_weight)
    refuse_unless_fits(estimate, available_heap(store), store.collection)
    return estimate


def refuse_unless_fits(estimate: ProjectionEstimate, left: int, collection: str) -> None:
    if estimate.bytes_min > left:
        raise ProjectionTooLarge(
            f"projecting collection {collection!r}'s {estimate.kind} graph ({estimate.nodes:,} "
            f"nodes, {estimate.relationships:,} relationships) needs at least "
            f"{_mib(estimate.bytes_min)} of heap, and the server has {_mib(left)} left after "
            "its other projections: raise server.memory.heap.max_size (NEO4J_HEAP), or drop "
            "collections you no longer use"
        )


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"
