#!/usr/bin/env bash
# Regenerates conformance/realworld/expected/ from the pinned reference (conformance/reference).
# Needs node and `npm ci` in conformance/reference. Usage: scripts/bless-realworld.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "bless-realworld: node is required" >&2; exit 1; }
[ -d conformance/reference/node_modules ] || (cd conformance/reference && npm ci --no-audit --no-fund)
out=conformance/realworld/expected
check=${1:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
for f in conformance/realworld/*.jsonl; do
  name=$(basename "$f" .jsonl)
  for pi in 0.73 0.87; do
    node conformance/reference/pi-ref.mjs context "$f" --pi "$pi" > "$tmp/$name.context.$pi.json"
    node conformance/reference/pi-ref.mjs context "$f" --llm --pi "$pi" > "$tmp/$name.llm.$pi.json"
    node conformance/reference/pi-ref.mjs migrate "$f" --pi "$pi" > "$tmp/$name.migrate.$pi.jsonl"
  done
done
if [ "$check" = "--check" ]; then
  diff -r "$out" "$tmp" && echo "bless-realworld: expected outputs are up to date"
else
  rm -rf "$out"; mkdir -p "$out"; cp "$tmp"/* "$out"/
  echo "bless-realworld: wrote $(ls "$out" | wc -l) files to $out"
fi
