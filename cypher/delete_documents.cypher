UNWIND $doc_ids AS did
MATCH (d:Document {id: did})
DETACH DELETE d
