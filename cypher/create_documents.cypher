UNWIND $docs AS doc
CREATE (d:Document {id: doc.id, collection: $collection})
SET d.source = doc.source, d.title = doc.title, d.content_hash = doc.content_hash,
    d.ingested_at = doc.ingested_at, d.title_key = doc.title_key
