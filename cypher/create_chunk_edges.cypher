UNWIND $edges AS e
MATCH (a:Chunk {id: e.src, collection: $collection})
MATCH (b:Chunk {id: e.dst, collection: $collection})
CREATE (a)-[r:$(e.kind)]->(b)
SET r.weight = e.weight
