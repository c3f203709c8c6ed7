MATCH (d:Document {collection: $collection})
RETURN d.id AS id, d.source AS source, d.title AS title, d.content_hash AS content_hash,
       d.ingested_at AS ingested_at
