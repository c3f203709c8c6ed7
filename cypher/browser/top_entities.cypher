// title: Top entities by mentions
// :param collection => "default"
// The named entities mentioned most often, with how many chunks and documents name them.
// Entities in many documents tie the corpus together (SHARES_ENTITY, entity hops).
MATCH (e:Entity {collection: $collection})<-[m:MENTIONS]-(c:Chunk)
RETURN e.name AS entity, e.label AS label, sum(m.count) AS mentions,
       count(DISTINCT c) AS chunks, count(DISTINCT c.doc_id) AS documents
ORDER BY mentions DESC, chunks DESC, entity
LIMIT 25
