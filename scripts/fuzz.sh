#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 20s).
# Their seed corpora run in every `go test`; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-20s}
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
  pkg=./$(dirname "${f#./}")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
    echo "fuzz: $pkg $fn ($t)"
    go test -tags sqlite_fts5 -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "$pkg"
  done
done
