// Whether the database holds anything at all.
MATCH (n) RETURN id(n) AS node LIMIT 1
