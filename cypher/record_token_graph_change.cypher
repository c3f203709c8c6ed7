// One part of what content version $version changed in a collection's token graph: the
// pairs it touched, each with its weight after the change (0: the pair is gone), the tokens
// it added and, of the tokens it touched ($touched), those it deleted (no chunk holds them). A query process's copy of the token graph (graph/neo4j/token_mirror.py)
// follows a change from these rows instead of reading every pair of the graph again.
// Written in the change's own transaction, after its co-occurrence deltas and deletions.
UNWIND $pairs AS p
OPTIONAL MATCH (:Token {collection: $collection, text: p.a})-[r:CO_OCCURS]->
               (:Token {collection: $collection, text: p.b})
WITH collect(p.a) AS a, collect(p.b) AS b, collect(coalesce(r.weight, 0)) AS w
WITH a, b, w, [t IN $touched WHERE NOT EXISTS {
  MATCH (:Token {collection: $collection, text: t}) }] AS gone
CREATE (:TokenGraphChange {collection: $collection, version: $version, part: $part,
        parts: $parts, a: a, b: b, w: w, tokens: $tokens, gone: gone})
