UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk})
MATCH (m:Community {id: row.community})
SET c.community = row.community
CREATE (c)-[:IN_COMMUNITY]->(m)
