#!/usr/bin/env bash
# `make bench SUITE=… ARGS=…`: one benchmark suite (`python -m bench SUITE ARGS`), against a
# real Neo4j + GDS started for the purpose and stopped after. Without SUITE: the ingest
# suite (both backends) and the PPR suite on one shared dataset (BENCH_DATASET, default
# 2wiki-dev). Results go to bench/out/; `make results` renders them into docs/results.md.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
export NEORAG_DATASETS="${NEORAG_DATASETS:-$repo/../shared/datasets}"
export NEO4J_RUN_DIR="$repo/.neo4j/bench" NEO4J_BOLT_PORT="${NEORAG_BENCH_BOLT_PORT:-7691}"
export NEO4J_HTTP_PORT="${NEORAG_BENCH_HTTP_PORT:-7478}" NEO4J_HEAP="${NEO4J_HEAP:-3g}"
unset NEO4J_PASSWORD
suite="${SUITE:-}"
if [[ -n "$suite" ]] && ! "$py" -m bench "$suite" --help >/dev/null; then exit 2; fi
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
if [[ -n "$suite" ]]; then
  # ARGS is split on spaces, as make passes it
  # shellcheck disable=SC2086
  "$py" -m bench "$suite" ${ARGS:-}
  exit
fi
dataset="${BENCH_DATASET:-$NEORAG_DATASETS/2wiki-dev}"
[[ -f "$dataset/corpus.jsonl" ]] || { echo "bench: no corpus.jsonl in $dataset (set BENCH_DATASET)" >&2; exit 1; }
name="$(basename "$dataset")"
"$py" -m bench ingest "$dataset" --backends embedded,neo4j --out "bench/out/ingest-$name.json"
NEORAG_DATA_DIR="$repo/.neorag/bench" "$py" -m bench ppr "$dataset" --out "bench/out/ppr-$name.json"
