CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName
