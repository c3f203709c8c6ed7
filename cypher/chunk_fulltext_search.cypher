// Chunks by weighted BM25 over their stored tokens (database serving: Lucene scores the
// `chunk_tokens` full-text index, whitespace-analysed, so the terms are neorag's own).
// $query is a Lucene query neorag builds from the weights, one quoted term each, limited to
// this collection by a clause that adds nothing to the score, e.g.
// :param query => '+collection:"default"^0 +(tokens:"lothair"^0.4 tokens:"mother"^0.2)'
// :param limit => 10
CALL db.index.fulltext.queryNodes('chunk_tokens', $query, {limit: $limit}) YIELD node, score
RETURN node.id AS id, score
