// Community nodes people can browse, with their chunks linked by IN_COMMUNITY.
UNWIND $communities AS com
CREATE (m:Community {collection: $collection, id: com.id})
SET m.level = com.level, m.size = com.size, m.top_tokens = com.top_tokens
