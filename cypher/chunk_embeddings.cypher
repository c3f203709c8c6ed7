// The stored embeddings of some chunks (database serving reranks a pool with them).
// :param ids => ['default:doc.md#0-1a2b3c']
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
WHERE c.collection = $collection AND c.embedding IS NOT NULL
RETURN c.id AS id, c.embedding AS embedding
