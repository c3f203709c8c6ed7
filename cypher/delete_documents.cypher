UNWIND $doc_ids AS did
MATCH (d:Document {id: did, collection: $collection})
DETACH DELETE d
