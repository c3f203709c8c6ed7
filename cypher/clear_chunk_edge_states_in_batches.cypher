// Forget every chunk-edge state of one collection, in batches (a large full rebuild).
MATCH (c:Chunk {collection: $collection}) WHERE c.edge_state IS NOT NULL
CALL (c) { REMOVE c.edge_state } IN TRANSACTIONS OF 10000 ROWS
