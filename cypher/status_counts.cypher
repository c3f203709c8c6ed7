// Node and relationship counts for `neorag status` (count store lookups, no scans).
CALL () { MATCH (d:Document) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (t:Token) RETURN count(t) AS tokens }
CALL () { MATCH (m:Community) RETURN count(m) AS communities }
CALL () { MATCH ()-[r:CO_OCCURS]->() RETURN count(r) AS co_occurs }
CALL () { MATCH ()-[r:HAS_TOKEN]->() RETURN count(r) AS has_token }
CALL () { MATCH ()-[r:MENTIONS]->() RETURN count(r) AS mentions }
CALL () { MATCH ()-[r:SEMANTIC]->() RETURN count(r) AS semantic }
CALL () { MATCH ()-[r:NEXT]->() RETURN count(r) AS next }
CALL () { MATCH ()-[r:SAME_SECTION]->() RETURN count(r) AS same_section }
CALL () { MATCH ()-[r:SHARES_ENTITY]->() RETURN count(r) AS shares_entity }
CALL () { MATCH ()-[r:CITES]->() RETURN count(r) AS cites }
CALL () { MATCH ()-[r:UTILITY]->() RETURN count(r) AS utility }
CALL () { MATCH ()-[r:RELATED]->() RETURN count(r) AS related }
RETURN documents, chunks, tokens, communities, co_occurs, has_token, mentions, semantic, next,
       same_section, shares_entity, cites, utility, related
