UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk, collection: $collection})
MATCH (t:Token {collection: $collection, text: row.token})
CREATE (c)-[:HAS_TOKEN {tf: row.tf}]->(t)
