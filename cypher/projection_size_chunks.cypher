// The size of one collection's chunk projection before projecting it (project_chunk_graph):
// its chunks, and its RELATED edges in both directions (the projection is undirected).
MATCH (a:Chunk {collection: $collection})
OPTIONAL MATCH (a)-[r:RELATED]->(:Chunk)
RETURN count(DISTINCT a) AS nodes, 2 * count(r) AS relationships
