// Forget every chunk-edge state of one collection (the edges are being rebuilt in full).
MATCH (c:Chunk {collection: $collection}) WHERE c.edge_state IS NOT NULL
REMOVE c.edge_state
