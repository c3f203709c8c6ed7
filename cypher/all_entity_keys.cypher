MATCH (e:Entity {collection: $collection}) RETURN e.key AS key
