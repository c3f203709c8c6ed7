MATCH (c:Chunk {collection: $collection}) WHERE c.id IN $seeds
WITH collect(c) AS sources
WHERE size(sources) > 0
CALL gds.pageRank.stream($name, {
  sourceNodes: sources, dampingFactor: $damping, maxIterations: $max_iterations,
  tolerance: $tolerance, relationshipWeightProperty: 'weight', concurrency: $concurrency})
YIELD nodeId, score
RETURN gds.util.asNode(nodeId).id AS id, score
