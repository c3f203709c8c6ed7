// The edges of one collection's token projection (project_token_graph): CO_OCCURS of at
// least $min_weight, each stored once (the projection makes them undirected). The Neo4j
// backend copies them into the query process for per-query PPR (graph/neo4j/token_mirror.py).
MATCH (a:Token {collection: $collection})-[r:CO_OCCURS]->(b:Token)
WHERE r.weight >= $min_weight
RETURN a.text AS a, b.text AS b, r.weight AS weight
