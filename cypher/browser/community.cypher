// title: A community, its top tokens and its chunks
// :param collection => "default"
// :param community => 0
// Community ids are 0, 1, 2, ... by size; list them with:
//   MATCH (m:Community {collection: 'default'}) RETURN m.id, m.size, m.top_tokens ORDER BY m.id
// Chunks are ranked by the RELATED weight they have inside their own community.
MATCH (m:Community {collection: $collection, id: $community})<-[member:IN_COMMUNITY]-(c:Chunk)
OPTIONAL MATCH (c)-[r:RELATED]-(peer:Chunk)-[:IN_COMMUNITY]->(m)
WITH m, member, c, round(sum(coalesce(r.weight, 0.0)), 3) AS internal_weight
RETURN m.id AS community, m.size AS size, m.top_tokens AS top_tokens, c.id AS chunk,
       c.doc_id AS document, c.section_path AS section, internal_weight, m, member, c
ORDER BY internal_weight DESC, chunk
LIMIT 50
