// Personalised PageRank over the token graph from the query's tokens: the top $top_k tokens.
// No seed in the graph means no rows (GDS would otherwise run a global PageRank).
// Example: :param name => 'neorag_tokens_1'; :param seeds => ['lothair', 'mother'] ...
MATCH (t:Token {collection: $collection}) WHERE t.text IN $seeds
WITH collect(t) AS sources
WHERE size(sources) > 0
CALL gds.pageRank.stream($name, {
  sourceNodes: sources, dampingFactor: $damping, maxIterations: $max_iterations,
  tolerance: $tolerance, relationshipWeightProperty: 'weight', concurrency: $concurrency})
YIELD nodeId, score
WITH nodeId, score ORDER BY score DESC LIMIT $top_k
RETURN gds.util.asNode(nodeId).text AS token, score
