MATCH (a:Chunk {collection: $collection})-[r:RELATED]->(b:Chunk)
RETURN a.id AS src, b.id AS dst, r.weight AS weight
