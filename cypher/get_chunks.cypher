UNWIND $ids AS cid
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {id: cid, collection: $collection})
RETURN c.id AS id, c.doc_id AS doc_id, c.ordinal AS ordinal, c.title AS title, c.text AS text,
       c.section_path AS section_path, c.n_tokens AS n_tokens, c.community AS community,
       d.source AS source
