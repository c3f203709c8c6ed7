"""In-process graph algorithms with Neo4j GDS 2.13 semantics (the embedded backend's engine).

Every function takes a symmetric weighted adjacency (`scipy.sparse.csr_matrix`, n × n) and
the shared `AlgorithmConfig`, so the embedded and Neo4j backends compute the same thing:
PPR reproduces `gds.pageRank` exactly; Leiden and FastRP follow GDS's objective and shape
with their own random generators; spectral coordinates have no GDS counterpart.
"""

from graph.algorithms.fastrp import fastrp
from graph.algorithms.leiden import canonical_labels, leiden, modularity
from graph.algorithms.ppr import PprOperator, PprRun, as_adjacency, personalized_pagerank
from graph.algorithms.spectral import spectral_coordinates

__all__ = [
    "PprOperator",
    "PprRun",
    "as_adjacency",
    "canonical_labels",
    "fastrp",
    "leiden",
    "modularity",
    "personalized_pagerank",
    "spectral_coordinates",
]
