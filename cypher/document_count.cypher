// How many documents the collection holds.
MATCH (d:Document {collection: $collection})
RETURN count(d) AS documents
