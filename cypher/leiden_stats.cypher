CALL gds.leiden.stats($name, {
  randomSeed: $seed, concurrency: $concurrency, relationshipWeightProperty: 'weight',
  gamma: $gamma, maxLevels: $max_levels, tolerance: $tolerance})
YIELD communityCount, modularity, ranLevels
RETURN communityCount, modularity, ranLevels
