// Some documents' titles and first chunks.
// :param doc_ids => ['default:doc.md']
UNWIND $doc_ids AS did
MATCH (d:Document {id: did})
WHERE d.collection = $collection
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk {ordinal: 0})
RETURN d.id AS doc_id, d.title AS title, c.id AS chunk_id
