// The subgraph behind one retrieval: the context chunks and every typed edge among them.
// `neorag ask --json` and the chat print it with its `:param ids => [...]` line.
MATCH (a:Chunk)-[r]-(b:Chunk)
WHERE a.id IN $ids AND b.id IN $ids
RETURN a, r, b
