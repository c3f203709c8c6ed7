// Tokens of added chunks: create if new, then add to their document frequency.
UNWIND $tokens AS tok
MERGE (t:Token {collection: $collection, text: tok.text})
ON CREATE SET t.df = 0
SET t.df = t.df + tok.df
