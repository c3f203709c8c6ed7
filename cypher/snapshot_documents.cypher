MATCH (d:Document {collection: $collection}) RETURN d.id AS id, d.content_hash AS content_hash
