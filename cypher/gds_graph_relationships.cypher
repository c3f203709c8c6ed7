// Relationships of one projection (both directions of an UNDIRECTED one), as the token
// PageRank's bounded tolerance is decided by it (graph/algorithms/ppr.py).
// Example: :param name => 'neorag_tokens.neo4j.default.v12_w2'
CALL gds.graph.list($name) YIELD relationshipCount
RETURN relationshipCount AS relationships
