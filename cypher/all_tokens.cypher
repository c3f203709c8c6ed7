MATCH (t:Token {collection: $collection}) RETURN t.text AS text, t.df AS df
