MATCH (m:NeoragMeta {key: $key}) RETURN m.value AS value
