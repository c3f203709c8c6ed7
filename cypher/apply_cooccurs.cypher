// Signed co-occurrence deltas; a pair is stored once, from the token whose text sorts first.
UNWIND $pairs AS p
MERGE (a:Token {collection: $collection, text: p.a})
ON CREATE SET a.df = 0
MERGE (b:Token {collection: $collection, text: p.b})
ON CREATE SET b.df = 0
MERGE (a)-[r:CO_OCCURS]->(b)
ON CREATE SET r.weight = 0
SET r.weight = r.weight + p.w
WITH r
WHERE r.weight <= 0
DELETE r
