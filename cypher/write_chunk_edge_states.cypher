// Per-chunk state of the incremental chunk-edge builders (opaque JSON text).
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk, collection: $collection})
SET c.edge_state = row.state
