// Takes the collection's write lock for as long as the surrounding transaction stays open;
// a second writer's transaction waits on it. Never committed: closing (or a crash) frees it.
MATCH (l:NeoragLock {collection: $collection})
SET l.owner = $owner, l.since = datetime()
RETURN l.collection AS collection
