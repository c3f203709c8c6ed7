"""What the Neo4j backend's helpers need of the store: running its named cypher/ statements
(on a routed read, on the GDS member, or inside one read transaction) and reading its
version counters.

The GDS layer (gds.py), the in-process token graph (token_mirror.py) and the projection
checks (capacity.py) are held by `Neo4jStore` and given it when made; they see it only
through `NamedQueries`, so none of them imports the store that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from scipy import sparse

if TYPE_CHECKING:
    from neo4j import Driver, ManagedTransaction

    from graph.config import Neo4jConfig
    from graph.types import ChunkEdge


class NamedQueries(Protocol):
    cfg: Neo4jConfig
    collection: str
    gds_driver: Driver  # the member GDS runs on (NEO4J_GDS_URI, else the writer)

    def read(self, query: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def gds_query(self, query: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def read_transaction(self, work: Callable[[ManagedTransaction], Any]) -> Any: ...

    def run_in(
        self, tx: ManagedTransaction, name: str, /, **params: Any
    ) -> list[dict[str, Any]]: ...

    def content_version_in(self, tx: ManagedTransaction) -> int: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def graph_version(self) -> int: ...

    def content_version(self) -> int: ...

    def chunk_ids(self) -> list[str]: ...

    def related_edges(self) -> list[ChunkEdge]: ...

    def related_adjacency(self) -> tuple[list[str], sparse.csr_matrix]: ...
