UNWIND $chunks AS ch
MATCH (d:Document {id: ch.doc_id, collection: $collection})
CREATE (d)-[:HAS_CHUNK]->(c:Chunk {id: ch.id, collection: $collection})
SET c.doc_id = ch.doc_id, c.ordinal = ch.ordinal, c.title = ch.title, c.text = ch.text,
    c.section_path = ch.section_path, c.n_tokens = ch.n_tokens, c.tokens = ch.tokens,
    c.links = ch.links, c.questions = ch.questions
WITH c, ch
WHERE ch.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', ch.embedding)
