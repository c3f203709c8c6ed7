MERGE (m:NeoragMeta {collection: $collection, key: $key}) SET m.value = $value
