#!/usr/bin/env bash
# Assemble a Neo4j Community + OpenGDS home (lib/ and plugins/) from Maven Central, no Docker.
# The result is cached under $NEORAG_CACHE (default ~/.cache/neorag), keyed by pom.xml's hash,
# so a warm machine reuses it. Prints the assembled directory on stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NEORAG_CACHE:-$HOME/.cache/neorag}"
# the files' contents only: a key holding their paths made every clone fetch its own copy
key="$(cat "$here/pom.xml" "$here/assemble.sh" | sha1sum | cut -c1-12)"
dest="$cache/neo4j-$key"
if [[ -f "$dest/.complete" ]]; then echo "$dest"; exit 0; fi

command -v mvn >/dev/null || { echo "assemble: Maven (mvn) is required to fetch Neo4j from Maven Central" >&2; exit 1; }
tmp="$(mktemp -d "$cache.assemble.XXXXXX" 2>/dev/null || { mkdir -p "$cache"; mktemp -d "$cache/assemble.XXXXXX"; })"
trap 'rm -rf "$tmp"' EXIT
echo "assemble: fetching Neo4j + GDS jars from Maven Central into $dest" >&2
mvn -q -B -f "$here/pom.xml" -P server dependency:copy-dependencies \
    -DincludeScope=runtime -Dmdep.prependGroupId=true -DoutputDirectory="$tmp/lib" >&2
mvn -q -B -f "$here/pom.xml" -P gds dependency:copy-dependencies \
    -DincludeScope=runtime -Dmdep.prependGroupId=true -DoutputDirectory="$tmp/plugins" >&2

# A library both sides need must load once, in Neo4j's version: drop GDS's copy of any
# group.artifact that Neo4j's lib/ already has (never put Neo4j's own jars in plugins).
artifact() { basename "$1" .jar | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9]+)*$//'; }
declare -A in_lib=()
for jar in "$tmp"/lib/*.jar; do in_lib["$(artifact "$jar")"]=1; done
for jar in "$tmp"/plugins/*.jar; do
  if [[ -n "${in_lib[$(artifact "$jar")]:-}" ]]; then rm -f "$jar"; fi
done
n_lib=$(ls "$tmp/lib" | wc -l); n_plugins=$(ls "$tmp/plugins" | wc -l)
[[ $n_lib -gt 100 && $n_plugins -gt 50 ]] || { echo "assemble: too few jars (lib=$n_lib plugins=$n_plugins)" >&2; exit 1; }
mkdir -p "$cache"; rm -rf "$dest"; mv "$tmp" "$dest"; trap - EXIT
touch "$dest/.complete"
echo "assemble: $n_lib server jars, $n_plugins GDS jars" >&2
echo "$dest"
