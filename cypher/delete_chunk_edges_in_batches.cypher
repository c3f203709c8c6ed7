// Derived chunk-to-chunk edges of one collection, deleted in batches: a full rebuild of a
// large collection would not fit the server's transaction memory in one transaction.
MATCH (:Chunk {collection: $collection})-[r:SEMANTIC|NEXT|SAME_SECTION|SHARES_ENTITY|CITES|UTILITY|RELATED]->(:Chunk)
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
