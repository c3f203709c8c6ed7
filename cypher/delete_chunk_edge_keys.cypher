// Delete the given chunk edges, each named by kind and endpoints (an incremental edge change).
UNWIND $edges AS e
MATCH (a:Chunk {id: e.src})-[r]->(b:Chunk {id: e.dst})
WHERE type(r) = e.kind
DELETE r
