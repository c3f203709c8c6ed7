UNWIND $edges AS e
MATCH (a:Chunk {id: e.src})
MATCH (b:Chunk {id: e.dst})
CREATE (a)-[r:$(e.kind)]->(b)
SET r.weight = e.weight
