UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk, collection: $collection})
MATCH (m:Community {collection: $collection, id: row.community})
SET c.community = row.community
CREATE (c)-[:IN_COMMUNITY]->(m)
