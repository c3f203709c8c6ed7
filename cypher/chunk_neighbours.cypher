// Every typed chunk edge touching the given chunks.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})-[r:SEMANTIC|NEXT|SAME_SECTION|SHARES_ENTITY|CITES|UTILITY|RELATED]-(o:Chunk)
WHERE $kinds IS NULL OR type(r) IN $kinds
RETURN DISTINCT type(r) AS kind, startNode(r).id AS src, endNode(r).id AS dst, r.weight AS weight
