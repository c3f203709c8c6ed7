// A throwaway weighted, undirected graph from an edge list (node ids as integers), for the
// check that the embedded PageRank equals GDS's (tests/graph/test_ppr_exact.py).
UNWIND $edges AS e
WITH gds.graph.project($name, e[0], e[1],
  {relationshipProperties: {weight: toFloat(e[2])}},
  {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS relationships
