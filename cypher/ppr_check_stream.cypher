// Personalised PageRank on the check graph; sources and results are GDS node ids.
CALL gds.pageRank.stream($name, {
  sourceNodes: $sources, dampingFactor: $damping, maxIterations: $max_iterations,
  tolerance: $tolerance, relationshipWeightProperty: $weight, concurrency: 1})
YIELD nodeId, score
RETURN nodeId, score
