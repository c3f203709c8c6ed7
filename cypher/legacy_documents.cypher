// Documents written by an older neorag (no `collection` property): their ids predate
// collections, so they are reported, never mixed into a collection.
MATCH (d:Document) WHERE d.collection IS NULL
RETURN count(d) AS documents
