#!/usr/bin/env bash
# `make eval`: the recall suite on the three shared datasets and the bundled documentation
# corpora (bench/datasets/sqlite-docs, bench/datasets/git-docs), embedded and Neo4j
# backends, every mode and baseline; then the answers suite (the offline reader, default
# mode, embedded, with the held-out first-100 runs). JSON in bench/out/, stamped with the
# command, commit and date; Markdown tables on stdout. `make results` then renders
# docs/results.md and the README's headline table from them.
# EVAL_SETS="git-docs sqlite-docs" runs only those (by folder name); default: all of them.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="$repo/.venv/bin/python"
export NEORAG_DATASETS="${NEORAG_DATASETS:-$repo/../shared/datasets}"
modes="${EVAL_MODES:-default,tigrag,bridge,spectrag,tigrag-spectrag,literag,dense,bm25,hybrid}"
export NEORAG_DATA_DIR="${NEORAG_DATA_DIR:-$repo/.neorag/eval-cache}"
export NEO4J_RUN_DIR="$repo/.neo4j/eval" NEO4J_BOLT_PORT="${NEORAG_EVAL_BOLT_PORT:-7692}"
export NEO4J_HTTP_PORT="${NEORAG_EVAL_HTTP_PORT:-7479}" NEO4J_HEAP="${NEO4J_HEAP:-3g}"
unset NEO4J_PASSWORD
ops/neo4j/server.sh start
trap 'ops/neo4j/server.sh stop' EXIT
"$py" ops/neo4j/wait_ready.py "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "$NEO4J_RUN_DIR/password" 240
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT" NEO4J_PASSWORD="$(cat "$NEO4J_RUN_DIR/password")"
read -r -a sets <<<"${EVAL_SETS:-2wiki-dev musique-200 hotpotqa-200 sqlite-docs git-docs}"
"$py" -m bench recall "${sets[@]}" --backends embedded,neo4j --modes "$modes"
"$py" -m bench answers "${sets[@]}"
names=()
for ds in "${sets[@]}"; do names+=("bench/out/eval-$ds-embedded.json" "bench/out/eval-$ds-neo4j.json"); done
for ds in "${sets[@]}"; do names+=("bench/out/answer-$ds-embedded.json"); done
"$py" -m bench.results --table "${names[@]}"
held=()
for ds in musique-200 hotpotqa-200; do
  [[ " ${sets[*]} " == *" $ds "* ]] && held+=("bench/out/answer-$ds-embedded.json")
done
if ((${#held[@]})); then "$py" -m bench.results --held-out "${held[@]}"; fi
