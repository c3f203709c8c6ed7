// The token graph PPR runs on: the full projection minus CO_OCCURS edges lighter than
// $min_weight (81% of 2Wiki's edges co-occur once; dropping them makes PPR ~3x faster
// with the same recall, see README).
CALL gds.graph.filter($name, $source, '*', 'r.weight >= $min_weight',
  {parameters: {min_weight: toFloat($min_weight)}})
YIELD graphName, nodeCount, relationshipCount
RETURN graphName, nodeCount, relationshipCount
