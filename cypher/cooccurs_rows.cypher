MATCH (a:Token {collection: $collection})-[r:CO_OCCURS]->(b:Token)
RETURN a.text AS a, b.text AS b, r.weight AS weight
