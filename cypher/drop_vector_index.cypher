// Dropped when the embedding model (and so the dimension) changes; recreated right after.
DROP INDEX chunk_embedding IF EXISTS
