// Chunks by id with all their facts (what document_chunks returns, for chosen chunks): an
// incremental edge update reads the chunks whose citations it recomputes.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
WITH c, collect(CASE WHEN e IS NULL THEN NULL ELSE [e.name, e.label, m.count] END) AS entities
RETURN c.id AS id, c.doc_id AS doc_id, c.ordinal AS ordinal, c.title AS title, c.text AS text,
       c.section_path AS section_path, c.n_tokens AS n_tokens, c.embedding AS embedding,
       c.links AS links, c.questions AS questions, c.tokens AS tokens, entities
ORDER BY doc_id, ordinal
