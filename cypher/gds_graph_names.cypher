CALL gds.graph.list() YIELD graphName RETURN graphName AS name
