UNWIND $chunk_ids AS cid
MATCH (:Chunk {id: cid})-[:MENTIONS]->(e:Entity)
RETURN DISTINCT e.key AS key
