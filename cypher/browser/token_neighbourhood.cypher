// title: A token's co-occurrence neighbourhood
// :param collection => "default"
// :param token => "graph"
// Tokens are lower-cased words of three or more characters, stopwords removed.
// The strongest CO_OCCURS partners of one token (weight = co-occurrences within four valid
// tokens, summed over the corpus), with how many chunks hold each partner.
MATCH (t:Token {collection: $collection, text: $token})-[co:CO_OCCURS]-(n:Token)
RETURN n.text AS neighbour, co.weight AS weight, n.df AS chunks_with_neighbour, t, co, n
ORDER BY weight DESC, neighbour
LIMIT 25
