// One token of the collection (a warm-up's first PageRank starts from it).
MATCH (t:Token {collection: $collection})
RETURN t.text AS token
LIMIT 1
