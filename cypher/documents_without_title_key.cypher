// Documents written before their title key was stored (backfilled once per collection).
MATCH (d:Document {collection: $collection})
WHERE d.title_key IS NULL
RETURN d.id AS id, d.title AS title
