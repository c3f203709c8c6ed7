MATCH (c:Chunk)-[h:HAS_TOKEN]->(t:Token)
RETURN c.id AS chunk, t.text AS token, h.tf AS tf
