// The token co-occurrence graph in the GDS catalog, undirected, weighted by CO_OCCURS.weight.
CALL gds.graph.project($name, 'Token',
  {CO_OCCURS: {orientation: 'UNDIRECTED', properties: {weight: {property: 'weight', defaultValue: 0.0}}}})
YIELD graphName, nodeCount, relationshipCount, projectMillis
RETURN graphName, nodeCount, relationshipCount, projectMillis
