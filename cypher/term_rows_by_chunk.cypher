// Each chunk's tokens and term frequencies, one row per chunk in id order: the whole term
// matrix, streamed to the reader a chunk at a time (a subquery per chunk, so the server
// aggregates nothing across the collection).
MATCH (c:Chunk {collection: $collection})
WITH c ORDER BY c.id
CALL {
  WITH c
  MATCH (c)-[h:HAS_TOKEN]->(t:Token)
  RETURN collect(t.text) AS tokens, collect(h.tf) AS tfs
}
RETURN c.id AS chunk, tokens, tfs
