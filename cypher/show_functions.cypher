// Every function the server knows, and whether it is Cypher's own: the read-only guard
// (app/cypher_guard.py) lets built-in functions through and vets plugin functions by name.
SHOW FUNCTIONS YIELD name, isBuiltIn
RETURN name, isBuiltIn
