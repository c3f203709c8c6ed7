MATCH (m:Community {collection: $collection}) DETACH DELETE m
