// Derived chunk-to-chunk edges, all kinds (replaced as a whole after an ingest).
MATCH (:Chunk {collection: $collection})-[r:SEMANTIC|NEXT|SAME_SECTION|SHARES_ENTITY|CITES|UTILITY|RELATED]->(:Chunk)
DELETE r
