// Nearest chunks of one collection by embedding, from Browser or the checks. The vector
// index spans every collection, so $candidates (≥ $k) nearest are filtered to this one.
// :param collection => 'default'; :param k => 5; :param candidates => 100; :param vector => [...]
CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node, score
WITH node, score WHERE node.collection = $collection
RETURN node.id AS id, node.title AS title, score
ORDER BY score DESC
LIMIT $k
