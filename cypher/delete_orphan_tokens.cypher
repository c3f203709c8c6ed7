UNWIND $tokens AS text
MATCH (t:Token {collection: $collection, text: text})
WHERE t.df <= 0
DETACH DELETE t
