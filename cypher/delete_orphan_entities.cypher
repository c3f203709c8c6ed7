UNWIND $keys AS key
MATCH (e:Entity {collection: $collection, key: key})
WHERE NOT EXISTS { (:Chunk)-[:MENTIONS]->(e) }
DELETE e
