MATCH (t:Token) RETURN t.text AS text, t.df AS df
