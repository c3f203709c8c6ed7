MATCH (c:Chunk) RETURN c.id AS id ORDER BY id
