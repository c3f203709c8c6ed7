MATCH (m:NeoragMeta {collection: $collection, key: $key}) RETURN m.value AS value
