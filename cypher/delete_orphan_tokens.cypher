UNWIND $tokens AS text
MATCH (t:Token {text: text})
WHERE t.df <= 0
DETACH DELETE t
