#!/usr/bin/env bash
# `make eval`: the evaluation harness on the three shared datasets, embedded and Neo4j
# backends, every mode and baseline; JSON in bench/out/, Markdown tables on stdout.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
datasets="${NEORAG_DATASETS:-$repo/../shared/datasets}"
modes="${EVAL_MODES:-default,tigrag,spectrag,tigrag-spectrag,literag,dense,bm25,hybrid}"
export NEORAG_DATA_DIR="${NEORAG_DATA_DIR:-$repo/.neorag/eval-cache}"
export NEO4J_RUN_DIR="$repo/.neo4j/eval" NEO4J_BOLT_PORT="${NEORAG_EVAL_BOLT_PORT:-7692}"
export NEO4J_HTTP_PORT="${NEORAG_EVAL_HTTP_PORT:-7479}" NEO4J_HEAP="${NEO4J_HEAP:-3g}"
unset NEO4J_PASSWORD
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
for backend in embedded neo4j; do
  for ds in 2wiki-dev musique-200 hotpotqa-200; do
    "$py" -m app.cli eval "$datasets/$ds" --backend "$backend" --modes "$modes" \
      --json "bench/out/eval-$ds-$backend.json"
  done
done
"$py" bench/results_table.py bench/out/eval-*.json
