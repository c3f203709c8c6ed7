// title: A document's chunks and their typed edges
// :param collection => "default"
// :param doc => "guide/graph-model.md"
// A document id (`neorag documents`), or any ending of one: its file path from a folder
// you ingested, as in the example. List them with
//   MATCH (d:Document {collection: 'default'}) RETURN d.id, d.title ORDER BY d.id LIMIT 25
// One row per chunk and typed edge (NEXT, SAME_SECTION, SEMANTIC, SHARES_ENTITY, CITES,
// UTILITY) to another chunk; `direction` says whether the edge leaves or enters the chunk
// (NEXT and CITES are directed, the other kinds are stored once per pair).
MATCH (d:Document {collection: $collection})-[has:HAS_CHUNK]->(c:Chunk)
WHERE d.id ENDS WITH $doc
OPTIONAL MATCH (c)-[e:NEXT|SAME_SECTION|SEMANTIC|SHARES_ENTITY|CITES|UTILITY]-(other:Chunk)
RETURN c.ordinal AS ordinal, c.section_path AS section, type(e) AS edge,
       CASE WHEN e IS NULL THEN null WHEN startNode(e) = c THEN 'out' ELSE 'in' END AS direction,
       round(e.weight, 3) AS weight, other.id AS other_chunk, other.doc_id AS other_document,
       d, has, c, e, other
ORDER BY ordinal, edge, weight DESC
