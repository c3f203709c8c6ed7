#!/usr/bin/env bash
# `make eval`: the evaluation harness on the three shared datasets and the bundled
# documentation corpora (bench/datasets/sqlite-docs, bench/datasets/git-docs), embedded and Neo4j backends, every mode
# and baseline; then the offline reader's answers (default mode, embedded). JSON in
# bench/out/ (stamped with commit and date), Markdown tables on stdout; `make results`
# then renders docs/results.md and the README's headline from them.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
datasets="${NEORAG_DATASETS:-$repo/../shared/datasets}"
modes="${EVAL_MODES:-default,tigrag,bridge,spectrag,tigrag-spectrag,literag,dense,bm25,hybrid}"
export NEORAG_DATA_DIR="${NEORAG_DATA_DIR:-$repo/.neorag/eval-cache}"
export NEO4J_RUN_DIR="$repo/.neo4j/eval" NEO4J_BOLT_PORT="${NEORAG_EVAL_BOLT_PORT:-7692}"
export NEO4J_HTTP_PORT="${NEORAG_EVAL_HTTP_PORT:-7479}" NEO4J_HEAP="${NEO4J_HEAP:-3g}"
unset NEO4J_PASSWORD
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
every=("$datasets/2wiki-dev" "$datasets/musique-200" "$datasets/hotpotqa-200"
  "$repo/bench/datasets/sqlite-docs" "$repo/bench/datasets/git-docs")
# EVAL_SETS="git-docs sqlite-docs" runs only those (by folder name); default: all of them.
sets=()
for ds in "${every[@]}"; do
  if [[ -z "${EVAL_SETS:-}" || " $EVAL_SETS " == *" $(basename "$ds") "* ]]; then sets+=("$ds"); fi
done
for backend in embedded neo4j; do
  for ds in "${sets[@]}"; do
    "$py" -m app.cli eval "$ds" --backend "$backend" --modes "$modes" \
      --json "bench/out/eval-$(basename "$ds")-$backend.json"
    "$py" -m bench.json_out "bench/out/eval-$(basename "$ds")-$backend.json"
  done
done
for ds in "${sets[@]}"; do
  "$py" -m app.cli eval "$ds" --backend embedded --modes default --answer offline \
    --json "bench/out/answer-$(basename "$ds")-embedded.json"
  "$py" -m bench.json_out "bench/out/answer-$(basename "$ds")-embedded.json"
done
# The reader's span weights were fitted on the first 100 questions of these two: the
# held-out last 100 are (2 x all - first 100), per metric.
held=()
for ds in musique-200 hotpotqa-200; do
  [[ " ${sets[*]} " == *"/$ds "* ]] || continue
  "$py" -m app.cli eval "$datasets/$ds" --backend embedded --modes default --answer offline \
    --limit 100 --json "bench/out/answer-$ds-embedded-first100.json"
  "$py" -m bench.json_out "bench/out/answer-$ds-embedded-first100.json"
  held+=("bench/out/answer-$ds-embedded.json")
done
names=()
for ds in "${sets[@]}"; do
  names+=("bench/out/eval-$(basename "$ds")-embedded.json" "bench/out/eval-$(basename "$ds")-neo4j.json")
done
for ds in "${sets[@]}"; do names+=("bench/out/answer-$(basename "$ds")-embedded.json"); done
"$py" -m bench.results --table "${names[@]}"
if ((${#held[@]})); then "$py" -m bench.results --held-out "${held[@]}"; fi
