MATCH (c:Chunk) WHERE c[$prop] IS NOT NULL
SET c[$prop] = null
