// The recorded changes of a collection's token graph after content version $after up to
// $through, in order (record_token_graph_change). Example:
// :param collection => 'default'; :param after => 3; :param through => 5;
MATCH (c:TokenGraphChange {collection: $collection})
WHERE $after < c.version <= $through
RETURN c.version AS version, c.part AS part, c.parts AS parts, c.a AS a, c.b AS b,
       c.w AS w, c.tokens AS tokens, c.gone AS gone
ORDER BY version, part
