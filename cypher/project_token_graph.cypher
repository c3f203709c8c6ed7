// One collection's token co-occurrence graph in the GDS catalog (Cypher aggregation),
// undirected, weighted by CO_OCCURS.weight, keeping edges of at least $min_weight: 81% of
// 2Wiki's pairs co-occur once, and PPR without them is ~3x faster with the same recall
// (README). Every token of the collection is a node, also one left without edges.
MATCH (a:Token {collection: $collection})
OPTIONAL MATCH (a)-[r:CO_OCCURS]->(b:Token)
WHERE r.weight >= $min_weight
WITH gds.graph.project($name, a, b,
  {relationshipProperties: {weight: toFloat(coalesce(r.weight, 0))}},
  {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graphName, g.nodeCount AS nodeCount,
       g.relationshipCount AS relationshipCount, g.projectMillis AS projectMillis
