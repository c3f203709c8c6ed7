UNWIND $keys AS key
MATCH (e:Entity {key: key})
WHERE NOT EXISTS { (:Chunk)-[:MENTIONS]->(e) }
DELETE e
