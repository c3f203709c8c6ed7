// The test harness's mark on a database it created (tests/conftest.py refuses others).
MATCH (m:NeoragTestMarker) RETURN count(m) AS markers
