// A collection other than this one whose chunks hold vectors of $dimension, the dimension
// the database's one chunk_embedding index was made with (no row: none). Such an index is
// kept when this collection's model has another dimension: dropping it would take it from
// that collection, and two collections would rebuild it in turn on every ingest.
MATCH (c:Chunk)
WHERE c.collection <> $collection AND size(c.embedding) = $dimension
RETURN c.collection AS collection
LIMIT 1
