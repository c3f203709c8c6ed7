// Each document's title and first chunk (query-time title linking).
MATCH (d:Document {collection: $collection})-[:HAS_CHUNK]->(c:Chunk {ordinal: 0})
RETURN d.id AS doc_id, d.title AS title, c.id AS chunk_id
