UNWIND $chunk_ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})
DETACH DELETE c
