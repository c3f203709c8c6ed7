MATCH (c:Chunk {collection: $collection})-[m:MENTIONS]->(e:Entity) RETURN c.id AS chunk, e.key AS key, m.count AS count
