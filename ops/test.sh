#!/usr/bin/env bash
# `make test`: start a fresh, real Neo4j + GDS on test ports, run every test against it, stop it.
# NEORAG_SKIP_NEO4J=1 is the explicit opt-out: Neo4j-backed tests are then reported as skipped.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
export NEO4J_RUN_DIR="$repo/.neo4j/test"
export NEO4J_BOLT_PORT="${NEORAG_TEST_BOLT_PORT:-7688}" NEO4J_HTTP_PORT="${NEORAG_TEST_HTTP_PORT:-7475}"
export NEO4J_HEAP="${NEO4J_HEAP:-1g}" NEO4J_PAGECACHE="${NEO4J_PAGECACHE:-256m}"
unset NEO4J_PASSWORD

if [[ "${NEORAG_SKIP_NEO4J:-0}" == "1" ]]; then
  echo "make test: NEORAG_SKIP_NEO4J=1, Neo4j-backed tests are skipped (and not counted as passing)"
  exec "$py" -m pytest "$@"
fi

ops/neo4j/server.sh stop >/dev/null 2>&1 || true
rm -rf "$NEO4J_RUN_DIR"
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
if ! "$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240; then
  echo "make test: could not start Neo4j + GDS (logs in $NEO4J_RUN_DIR/logs); last lines:" >&2
  tail -n 20 "$NEO4J_RUN_DIR/logs/console.log" "$NEO4J_RUN_DIR/logs/neo4j.log" >&2 || true
  echo "make test: fix the above, or run NEORAG_SKIP_NEO4J=1 make test to skip Neo4j-backed tests" >&2
  exit 1
fi
"$py" ops/neo4j/mark_test_db.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password"
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_USER=neo4j
NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
export NEO4J_PASSWORD
export NEORAG_TEST_NEO4J_HTTP="http://127.0.0.1:$NEO4J_HTTP_PORT"
"$py" -m pytest "$@"
