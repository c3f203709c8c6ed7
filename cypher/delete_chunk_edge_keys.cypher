// Delete the given chunk edges, each named by kind and endpoints (an incremental edge change).
UNWIND $edges AS e
MATCH (a:Chunk {id: e.src, collection: $collection})-[r]->(b:Chunk {id: e.dst, collection: $collection})
WHERE type(r) = e.kind
DELETE r
