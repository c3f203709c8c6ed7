// One collection's chunk graph in the GDS catalog (Cypher aggregation), undirected,
// weighted by the fused RELATED.weight; every chunk is a node.
MATCH (a:Chunk {collection: $collection})
OPTIONAL MATCH (a)-[r:RELATED]->(b:Chunk)
WITH gds.graph.project($name, a, b,
  {relationshipProperties: {weight: coalesce(r.weight, 0.0)}},
  {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graphName, g.nodeCount AS nodeCount,
       g.relationshipCount AS relationshipCount, g.projectMillis AS projectMillis
