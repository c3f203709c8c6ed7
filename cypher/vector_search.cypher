// Nearest chunks by embedding, from Browser or the checks: :param vector => [...384 floats]
CALL db.index.vector.queryNodes('chunk_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, node.title AS title, score
