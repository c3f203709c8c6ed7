MATCH (d:Document {collection: $collection})-[:HAS_CHUNK]->(c:Chunk)
WHERE d.id IN $doc_ids
RETURN c.id AS id, c.tokens AS tokens
