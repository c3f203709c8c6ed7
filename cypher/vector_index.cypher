// The vector index on chunk embeddings (cosine), for people querying from Browser with
// db.index.vector.queryNodes('chunk_embedding', k, $vector).
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON (c.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
