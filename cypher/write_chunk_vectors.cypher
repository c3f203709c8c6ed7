// $prop is one of fastrp, spectral (checked by the caller); values are float lists.
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk, collection: $collection})
SET c[$prop] = row.vector
