UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk})
MATCH (t:Token {text: row.token})
CREATE (c)-[:HAS_TOKEN {tf: row.tf}]->(t)
