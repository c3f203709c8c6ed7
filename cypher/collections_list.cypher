// Every collection in this database, with its document and chunk counts.
MATCH (m:NeoragMeta {key: 'created_at'})
WITH m.collection AS name, m.value AS created_at
CALL (name) { MATCH (d:Document {collection: name}) RETURN count(d) AS documents }
CALL (name) { MATCH (c:Chunk {collection: name}) RETURN count(c) AS chunks }
RETURN name, created_at, documents, chunks
ORDER BY name
