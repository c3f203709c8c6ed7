// A small, short-lived projection of the RELATED subgraph induced by a candidate set
// (Cypher aggregation), for relevance diffusion at query time; dropped right after use.
MATCH (a:Chunk {collection: $collection}) WHERE a.id IN $ids
OPTIONAL MATCH (a)-[r:RELATED]->(b:Chunk) WHERE b.id IN $ids
WITH gds.graph.project($name, a, b,
  {relationshipProperties: {weight: coalesce(r.weight, 0.0)}},
  {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS relationships
