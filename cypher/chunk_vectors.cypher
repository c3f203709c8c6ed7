// $prop is one of embedding, fastrp, spectral (checked by the caller).
MATCH (c:Chunk {collection: $collection})
WHERE ($ids IS NULL OR c.id IN $ids) AND c[$prop] IS NOT NULL
RETURN c.id AS id, c[$prop] AS vector
