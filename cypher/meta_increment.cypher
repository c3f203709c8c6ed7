// Bump a counter (graph and content versions) inside the writing transaction.
MERGE (m:NeoragMeta {collection: $collection, key: $key})
SET m.value = toString(coalesce(toInteger(m.value), 0) + 1)
RETURN toInteger(m.value) AS value
