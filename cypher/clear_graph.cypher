// Everything neorag wrote, in batches so a large graph does not need one huge transaction.
MATCH (n) WHERE n:Document OR n:Chunk OR n:Token OR n:Entity OR n:Community OR n:NeoragMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
