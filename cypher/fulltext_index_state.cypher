// Whether the chunk_tokens full-text index exists and is online (database serving reads it).
SHOW FULLTEXT INDEXES YIELD name, state
WHERE name = 'chunk_tokens'
RETURN state
