// The chunks of this collection nearest a query vector, best first (database serving).
// The vector index spans every collection: $candidates nearest are read and this
// collection's kept; the caller widens $candidates when fewer than it needs remain.
// :param candidates => 100; :param vector => [...]
CALL db.index.vector.queryNodes('chunk_embedding', $candidates, $vector) YIELD node, score
WITH node, score WHERE node.collection = $collection
RETURN node.id AS id, score
