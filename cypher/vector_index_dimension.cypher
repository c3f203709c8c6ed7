// The dimension the chunk_embedding vector index was created with (no row: no index).
SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'chunk_embedding'
RETURN options.indexConfig['vector.dimensions'] AS dimension
