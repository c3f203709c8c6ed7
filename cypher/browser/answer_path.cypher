// title: The path behind an answer
// :param collection => "default"
// :param ids => ["guide/install.md#5-49c6e3a6", "guide/neo4j.md#5-d7d81c28", "guide/graph-model.md#0-7a2e1c1e", "guide/neo4j.md#0-6bec6543", "guide/neo4j.md#1-a5336f44"]
// Use the chunk ids an answer cited: neorag ask "..." --json | jq -c '[.citations[].chunk_id]'
// (the example: "How do I explore the graph in Neo4j Browser?" on the sample corpus). A
// full id is `<collection>:<file path>#<ordinal>-<hash>`; any ending of one works, as in
// the example, so the hints hold wherever the sample corpus was checked out.
// For each cited chunk: its document, the typed edges to the other cited chunks, and the
// entities it shares with them. The graph view shows how the evidence hangs together.
MATCH (c:Chunk {collection: $collection}) WHERE any(id IN $ids WHERE c.id ENDS WITH id)
CALL (c) {
  MATCH p = (:Document)-[:HAS_CHUNK]->(c)
  RETURN 'document' AS link, p
  UNION ALL
  MATCH p = (c)-[e:NEXT|SAME_SECTION|SEMANTIC|SHARES_ENTITY|CITES|UTILITY]->(o:Chunk)
  WHERE any(id IN $ids WHERE o.id ENDS WITH id)
  RETURN type(e) AS link, p
  UNION ALL
  MATCH p = (c)-[:MENTIONS]->(x:Entity)<-[:MENTIONS]-(o:Chunk)
  WHERE any(id IN $ids WHERE o.id ENDS WITH id) AND c.id < o.id
  RETURN 'entity: ' + x.name AS link, p
}
RETURN c.id AS chunk, link, p
ORDER BY chunk, link
