// Which of these tokens the collection's token graph holds.
// :param tokens => ['lothair', 'mother']
MATCH (t:Token {collection: $collection})
WHERE t.text IN $tokens
RETURN t.text AS token
