MATCH (m:Community) DETACH DELETE m
