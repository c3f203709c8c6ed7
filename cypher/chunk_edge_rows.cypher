MATCH (a:Chunk {collection: $collection})-[r:SEMANTIC|NEXT|SAME_SECTION|SHARES_ENTITY|CITES|UTILITY|RELATED]->(b:Chunk)
RETURN type(r) AS kind, a.id AS src, b.id AS dst, r.weight AS weight
