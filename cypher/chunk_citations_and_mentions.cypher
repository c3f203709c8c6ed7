// What one TIGRAG entity hop reads about its top chunks, in one round trip: the CITES edges
// touching each chunk and the entities each chunk mentions (chunk_neighbours with kinds
// ['CITES'] plus chunk_entities).
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid, collection: $collection})
RETURN c.id AS chunk,
  [(c)-[r:CITES]-(:Chunk) | {src: startNode(r).id, dst: endNode(r).id, weight: r.weight}]
    AS cites,
  [(c)-[m:MENTIONS]->(e:Entity) | {name: e.name, label: e.label, count: m.count, key: e.key}]
    AS mentions
