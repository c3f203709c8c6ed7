MATCH (c:Chunk {collection: $collection}) WHERE c[$prop] IS NOT NULL
SET c[$prop] = null
