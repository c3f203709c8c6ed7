UNWIND $ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})-[m:MENTIONS]->(e:Entity)
RETURN c.id AS chunk, e.name AS name, e.label AS label, m.count AS count
ORDER BY chunk, e.key
