// Every chunk with the facts the chunk-graph edge builders need. A subquery per chunk
// collects its mentions, so nothing is aggregated across the collection: the rows stream to
// the reader (graph/neo4j/store_reads.py orders them).
MATCH (c:Chunk {collection: $collection})
CALL {
  WITH c
  OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
  RETURN collect(CASE WHEN e IS NULL THEN NULL ELSE [e.name, e.label, m.count] END) AS entities
}
RETURN c.id AS id, c.doc_id AS doc_id, c.ordinal AS ordinal, c.title AS title, c.text AS text,
       c.section_path AS section_path, c.n_tokens AS n_tokens, c.embedding AS embedding,
       c.links AS links, c.questions AS questions, entities
