// Record a value once (a collection's creation time), keeping the first one written.
MERGE (m:NeoragMeta {collection: $collection, key: $key})
ON CREATE SET m.value = $value
