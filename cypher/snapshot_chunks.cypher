MATCH (c:Chunk {collection: $collection}) RETURN c.id AS id, c.doc_id AS doc_id, c.ordinal AS ordinal
