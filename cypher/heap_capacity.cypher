// The server's heap ceiling and what the GDS graph catalog already holds in it (every
// collection's projections): what a new projection can count on at most.
CALL gds.graph.list() YIELD sizeInBytes
WITH sum(sizeInBytes) AS catalog_bytes
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
RETURN attributes.HeapMemoryUsage.value.properties.max AS max_heap, catalog_bytes
