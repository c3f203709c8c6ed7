UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
WHERE c.edge_state IS NOT NULL
RETURN c.id AS id, c.edge_state AS state
