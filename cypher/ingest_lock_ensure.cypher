// The node whose write lock serialises ingests into one collection (graph/neo4j/lock.py).
MERGE (l:NeoragLock {collection: $collection})
