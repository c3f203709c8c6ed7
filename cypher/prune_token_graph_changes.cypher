// The token-graph changes of content versions up to $through: a copy that old reads the
// whole graph again (graph/neo4j/token_mirror.py).
MATCH (c:TokenGraphChange {collection: $collection})
WHERE c.version <= $through
DELETE c
