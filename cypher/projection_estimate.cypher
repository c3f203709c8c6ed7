// GDS's memory estimate for a weighted graph of $nodes nodes and $relationships
// relationships (a fictitious graph: only the counts matter).
CALL gds.graph.project.estimate('*', {R: {type: '*', properties: {weight: {defaultValue: 0.0}}}},
  {nodeCount: $nodes, relationshipCount: $relationships})
YIELD bytesMin, bytesMax, requiredMemory
RETURN bytesMin, bytesMax, requiredMemory
