MATCH (c:Chunk) WHERE c.edge_state IS NOT NULL
REMOVE c.edge_state
