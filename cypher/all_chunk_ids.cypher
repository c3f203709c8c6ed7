MATCH (c:Chunk {collection: $collection}) RETURN c.id AS id ORDER BY id
