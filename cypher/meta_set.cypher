MERGE (m:NeoragMeta {key: $key}) SET m.value = $value
