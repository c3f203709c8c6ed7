MATCH (e:Entity) RETURN e.key AS key
