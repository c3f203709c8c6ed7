// The size of one collection's token projection before projecting it (project_token_graph):
// its tokens, and its CO_OCCURS edges of weight >= $min_weight in both directions (the
// projection is undirected).
MATCH (a:Token {collection: $collection})
OPTIONAL MATCH (a)-[r:CO_OCCURS]->(:Token)
WHERE r.weight >= $min_weight
RETURN count(DISTINCT a) AS nodes, 2 * count(r) AS relationships
