CALL gds.leiden.stream($name, {
  randomSeed: $seed, concurrency: $concurrency, relationshipWeightProperty: 'weight',
  gamma: $gamma, maxLevels: $max_levels, tolerance: $tolerance})
YIELD nodeId, communityId
RETURN gds.util.asNode(nodeId).id AS id, communityId AS community
