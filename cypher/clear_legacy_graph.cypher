// The graph an older neorag (before collections) wrote: neorag's labels without a
// `collection` property. Deleted only by `neorag ingest PATH --rebuild` into `default`.
MATCH (n) WHERE (n:Document OR n:Chunk OR n:Token OR n:Entity OR n:Community OR n:NeoragMeta)
  AND n.collection IS NULL
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
