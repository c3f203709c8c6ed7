// A collection other than this one whose chunks hold vectors of $dimension, the dimension
// the database's one chunk_embedding index was made with (no row: none). Such an index is
// kept when this collection's model has another dimension: dropping it would take it from
// that collection, and two collections would rebuild it in turn on every ingest. One chunk
// per registered collection is read (a collection's chunks share its model's dimension),
// so the cost follows the number of collections, not of chunks.
MATCH (m:NeoragMeta {key: 'created_at'})
WHERE m.collection <> $collection
CALL (m) {
  MATCH (c:Chunk {collection: m.collection})
  WHERE c.embedding IS NOT NULL
  RETURN size(c.embedding) AS dimension
  LIMIT 1
}
WITH m.collection AS collection, dimension
WHERE dimension = $dimension
RETURN collection
LIMIT 1
