#!/usr/bin/env bash
# `make bench`: the ingest benchmark (both backends) and the PPR benchmark on a shared
# dataset, against a real Neo4j + GDS started for the purpose. Results go to bench/out/.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
dataset="${BENCH_DATASET:-${NEORAG_DATASETS:-$repo/../shared/datasets}/2wiki-dev}"
[[ -f "$dataset/corpus.jsonl" ]] || { echo "bench: no corpus.jsonl in $dataset (set BENCH_DATASET)" >&2; exit 1; }
export NEO4J_RUN_DIR="$repo/.neo4j/bench" NEO4J_BOLT_PORT="${NEORAG_BENCH_BOLT_PORT:-7691}"
export NEO4J_HTTP_PORT="${NEORAG_BENCH_HTTP_PORT:-7478}" NEO4J_HEAP="${NEO4J_HEAP:-3g}"
unset NEO4J_PASSWORD
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
name="$(basename "$dataset")"
"$py" bench/ingest_bench.py "$dataset" --backends embedded,neo4j --out "bench/out/ingest-$name.json"
NEORAG_DATA_DIR="$repo/.neorag/bench" "$py" bench/ppr_bench.py "$dataset" --out "bench/out/ppr-$name.json"
