// Marks a fresh database as the test harness's own (ops/neo4j/mark_test_db.py, conftest).
MERGE (m:NeoragTestMarker {id: 'neorag-test-harness'})
ON CREATE SET m.created_at = datetime()
