CALL gds.fastRP.write($name, {
  embeddingDimension: $dimension, randomSeed: $seed, concurrency: $concurrency,
  iterationWeights: $iteration_weights, normalizationStrength: $normalization_strength,
  relationshipWeightProperty: 'weight', writeProperty: 'fastrp'})
YIELD nodePropertiesWritten
RETURN nodePropertiesWritten
