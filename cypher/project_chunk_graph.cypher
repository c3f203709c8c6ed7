// The chunk graph in the GDS catalog, undirected, weighted by the fused RELATED.weight.
CALL gds.graph.project($name, 'Chunk',
  {RELATED: {orientation: 'UNDIRECTED', properties: {weight: {property: 'weight', defaultValue: 0.0}}}})
YIELD graphName, nodeCount, relationshipCount, projectMillis
RETURN graphName, nodeCount, relationshipCount, projectMillis
