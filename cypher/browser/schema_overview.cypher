// title: Schema overview: node labels and relationship types with their counts
// params: none
// Shows how big each part of the neorag graph is (Document, Chunk, Token, Entity, Community;
// HAS_CHUNK, HAS_TOKEN, CO_OCCURS, MENTIONS, the six typed chunk edges, RELATED, ...).
// For a drawing of how labels connect, run `CALL db.schema.visualization()` instead.
CALL () {
  CALL db.labels() YIELD label
  CALL (label) { MATCH (n:$(label)) RETURN count(n) AS count }
  RETURN 'node' AS kind, label AS name, count
  UNION ALL
  CALL db.relationshipTypes() YIELD relationshipType
  CALL (relationshipType) { MATCH ()-[r:$(relationshipType)]->() RETURN count(r) AS count }
  RETURN 'relationship' AS kind, relationshipType AS name, count
}
WITH kind, name, count WHERE count > 0
RETURN kind, name, count
ORDER BY kind, count DESC, name
