// Node and relationship counts of one collection for `neorag status` (index lookups on
// `collection`, then relationship counts from each node's degree).
CALL () { MATCH (d:Document {collection: $collection}) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk {collection: $collection}) RETURN count(c) AS chunks }
CALL () { MATCH (t:Token {collection: $collection}) RETURN count(t) AS tokens }
CALL () { MATCH (m:Community {collection: $collection}) RETURN count(m) AS communities }
CALL () { MATCH (:Token {collection: $collection})-[r:CO_OCCURS]->() RETURN count(r) AS co_occurs }
CALL () { MATCH (:Chunk {collection: $collection})-[r:HAS_TOKEN]->() RETURN count(r) AS has_token }
CALL () { MATCH (:Chunk {collection: $collection})-[r:MENTIONS]->() RETURN count(r) AS mentions }
CALL () { MATCH (:Chunk {collection: $collection})-[r:SEMANTIC]->() RETURN count(r) AS semantic }
CALL () { MATCH (:Chunk {collection: $collection})-[r:NEXT]->() RETURN count(r) AS next }
CALL () { MATCH (:Chunk {collection: $collection})-[r:SAME_SECTION]->() RETURN count(r) AS same_section }
CALL () { MATCH (:Chunk {collection: $collection})-[r:SHARES_ENTITY]->() RETURN count(r) AS shares_entity }
CALL () { MATCH (:Chunk {collection: $collection})-[r:CITES]->() RETURN count(r) AS cites }
CALL () { MATCH (:Chunk {collection: $collection})-[r:UTILITY]->() RETURN count(r) AS utility }
CALL () { MATCH (:Chunk {collection: $collection})-[r:RELATED]->() RETURN count(r) AS related }
RETURN documents, chunks, tokens, communities, co_occurs, has_token, mentions, semantic, next,
       same_section, shares_entity, cites, utility, related
