// The collection's number of chunks (an index lookup on `collection`).
MATCH (c:Chunk {collection: $collection})
RETURN count(c) AS chunks
