// The degree-centrality ablation of token PPR: the seeds' co-occurrence neighbours ranked
// by the summed weight of their edges to the seeds.
MATCH (s:Token {collection: $collection})-[r:CO_OCCURS]-(t:Token)
WHERE s.text IN $seeds
RETURN t.text AS token, sum(r.weight) AS weight
ORDER BY weight DESC, token
LIMIT $top_k
