// The chunk-edge builders' stored state of the given chunks (those that have one).
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})
WHERE c.edge_state IS NOT NULL
RETURN c.id AS id, c.edge_state AS state
