UNWIND $chunk_ids AS cid
MATCH (:Chunk {id: cid, collection: $collection})-[:MENTIONS]->(e:Entity)
RETURN DISTINCT e.key AS key
