// Every node of one collection, with its relationships, in batches so a large collection
// does not need one huge transaction. Other collections and non-neorag data are untouched.
CALL () {
  MATCH (n:Document {collection: $collection}) RETURN n
  UNION ALL MATCH (n:Chunk {collection: $collection}) RETURN n
  UNION ALL MATCH (n:Token {collection: $collection}) RETURN n
  UNION ALL MATCH (n:Entity {collection: $collection}) RETURN n
  UNION ALL MATCH (n:Community {collection: $collection}) RETURN n
  UNION ALL MATCH (n:NeoragMeta {collection: $collection}) RETURN n
  UNION ALL MATCH (n:TokenGraphChange {collection: $collection}) RETURN n
}
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
