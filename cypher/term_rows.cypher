MATCH (c:Chunk {collection: $collection})-[h:HAS_TOKEN]->(t:Token)
RETURN c.id AS chunk, t.text AS token, h.tf AS tf
