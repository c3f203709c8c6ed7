#!/usr/bin/env bash
# `make test`: start a fresh, real Neo4j + GDS on test ports, run every test against it, stop it.
# NEORAG_SKIP_NEO4J=1 is the explicit opt-out: Neo4j-backed tests are then reported as skipped.
# NEORAG_TEST_RUN_DIR (default .neo4j/test) is the server's directory, wiped on every run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
export NEO4J_RUN_DIR="${NEORAG_TEST_RUN_DIR:-$repo/.neo4j/test}"
# The test ports: NEORAG_TEST_BOLT_PORT / NEORAG_TEST_HTTP_PORT when set; otherwise 7688 and
# 7475, or a free loopback port when another server (a second clone's tests, a benchmark's
# server) holds the default.
port() {
  "$py" - "$1" <<'PY'
import socket, sys
wanted = int(sys.argv[1])
with socket.socket() as s:
    try:
        s.bind(("127.0.0.1", wanted))
    except OSError:
        s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
PY
}
export NEO4J_BOLT_PORT="${NEORAG_TEST_BOLT_PORT:-$(port 7688)}"
export NEO4J_HTTP_PORT="${NEORAG_TEST_HTTP_PORT:-$(port 7475)}"
export NEO4J_HEAP="${NEO4J_HEAP:-1g}" NEO4J_PAGECACHE="${NEO4J_PAGECACHE:-256m}"
unset NEO4J_PASSWORD
started=$SECONDS
export NEORAG_TEST_SUMMARY="$NEO4J_RUN_DIR.summary"
rm -f "$NEORAG_TEST_SUMMARY"

if [[ "${NEORAG_SKIP_NEO4J:-0}" == "1" ]]; then
  echo "make test: NEORAG_SKIP_NEO4J=1, Neo4j-backed tests are skipped (and not counted as passing)"
  exec "$py" -m pytest "$@"
fi

cannot_start() {
  echo "make test: could not start Neo4j + GDS (logs in $NEO4J_RUN_DIR/logs); last lines:" >&2
  tail -n 20 "$NEO4J_RUN_DIR/logs/console.log" "$NEO4J_RUN_DIR/logs/neo4j.log" >&2 2>/dev/null || true
  local cause
  cause="$(grep -h "Caused by:" "$NEO4J_RUN_DIR/logs/neo4j.log" 2>/dev/null | tail -n 1 | sed 's/^.*Exception: //')" || true
  [[ -n "$cause" ]] && echo "make test: the server's reason: $cause" >&2
  echo "make test: fix the above, or run NEORAG_SKIP_NEO4J=1 make test to skip Neo4j-backed tests" >&2
  exit 1
}

ops/neo4j/server.sh stop >/dev/null 2>&1 || true
rm -rf "$NEO4J_RUN_DIR"
trap 'ops/neo4j/server.sh stop' EXIT
ops/neo4j/server.sh start || cannot_start
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240 \
  "$NEO4J_RUN_DIR/neo4j.pid" || cannot_start
"$py" ops/neo4j/mark_test_db.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password"
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_USER=neo4j
NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
export NEO4J_PASSWORD
export NEORAG_TEST_NEO4J_HTTP="http://127.0.0.1:$NEO4J_HTTP_PORT"
rc=0
if [[ $# -gt 0 ]]; then
  "$py" -m pytest "$@" || rc=$?
else
  # Test files spread over NEORAG_TEST_WORKERS processes (each file on one, so its module
  # fixtures are built once), then the tests marked `exclusive` alone: whole-database
  # invariants and wall-clock bounds that other tests' load would break. Three on two
  # cores: the tests wait on servers, subprocesses and the disk about half of the time
  # (parallel part 705 s with three, 818 s with two, in the same hour).
  workers="${NEORAG_TEST_WORKERS:-3}"
  if [[ "$workers" -gt 1 ]]; then
    # The database's one vector index stays at the shipped model's size while the parallel
    # part runs (tests/vector_anchor.py); the exclusive part checks it following a model.
    "$py" -m tests.vector_anchor hold
    "$py" -m pytest -n "$workers" --dist loadfile -m "not exclusive" || rc=$?
    "$py" -m tests.vector_anchor release
    "$py" -m pytest -m exclusive || { code=$?; [[ $rc -ne 0 ]] || rc=$code; }
  else
    "$py" -m pytest || rc=$?
  fi
fi
trap - EXIT
ops/neo4j/server.sh stop
summary="$("$py" -c 'import sys; from pathlib import Path; from tests.conftest import summary_line; print(summary_line(Path(sys.argv[1])))' "$NEORAG_TEST_SUMMARY")"
echo "make test: $summary; wall time $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s (exit $rc)"
exit "$rc"
