MATCH (m:Community {collection: $collection})
RETURN m.id AS id, m.level AS level, m.size AS size, m.top_tokens AS top_tokens
ORDER BY id
