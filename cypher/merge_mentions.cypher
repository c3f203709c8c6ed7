UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk, collection: $collection})
MERGE (e:Entity {collection: $collection, key: row.key})
ON CREATE SET e.name = row.name, e.label = row.label
MERGE (c)-[m:MENTIONS]->(e)
ON CREATE SET m.count = 0
SET m.count = m.count + row.count
