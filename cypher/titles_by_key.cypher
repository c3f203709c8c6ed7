// Documents whose case-folded title key is one of $keys (the phrases of a question), with
// their first chunk: title linking without a table of every title in the process.
// :param keys => ['lothair ii', 'lothair']
MATCH (d:Document {collection: $collection})
WHERE d.title_key IN $keys
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk {ordinal: 0})
RETURN d.id AS doc_id, d.title AS title, c.id AS chunk_id
