// Removing a chunk: each token it holds is now in one chunk fewer.
UNWIND $chunk_ids AS cid
MATCH (:Chunk {id: cid, collection: $collection})-[:HAS_TOKEN]->(t:Token)
SET t.df = t.df - 1
