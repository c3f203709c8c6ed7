// The chunks mentioning each entity (by key): who shares an entity with a changed chunk.
UNWIND $keys AS k
MATCH (e:Entity {collection: $collection, key: k})<-[:MENTIONS]-(c:Chunk)
RETURN k AS key, collect(c.id) AS chunks
