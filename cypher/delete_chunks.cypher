UNWIND $chunk_ids AS cid
MATCH (c:Chunk {id: cid})
DETACH DELETE c
