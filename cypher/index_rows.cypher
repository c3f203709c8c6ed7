// What a full build of the search files reads of every chunk: its id, its document, its
// embedding and its utility questions (streamed; nothing else of the chunk).
MATCH (c:Chunk {collection: $collection})
RETURN c.id AS id, c.doc_id AS doc_id, c.embedding AS embedding, c.questions AS questions
