#!/usr/bin/env bash
# Runs every benchmark program under bench/ and writes docs/BENCHMARKS.md:
# each program prints its own Markdown section (figure, baseline measured in
# the same run, ratio, goal, command).
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/BENCHMARKS.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# Benchmarks"
  echo
  echo "Written by \`make bench\` on $(date -u +%Y-%m-%d): $(uname -sm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | awk '{print $3}')."
  echo "Each figure is measured next to its baseline in the same run. Timing varies with machine load; the"
  echo "goals are the issues' targets."
  echo
} > "$tmp"
status=0
# Build every program first, then run each on a settled machine (no
# compiler or write-back of the last one's files still running): the
# figures are latencies of a few hundred microseconds.
bins=$(mktemp -d)
trap 'rm -rf "$tmp" "$bins"' EXIT
for dir in bench/*/; do
  [ -f "$dir/main.go" ] && go build -tags sqlite_fts5 -o "$bins/$(basename "$dir")" "./$dir"
done
for dir in bench/*/; do
  name=$(basename "$dir")
  [ -f "$dir/main.go" ] || continue
  sync
  sleep 2
  echo "bench: $name" >&2
  if ! "$bins/$name" >> "$tmp"; then
    echo "bench: $name failed" >&2
    echo -e "\n### $name\n\n**failed to run** (see the make bench output)\n" >> "$tmp"
    status=1
  fi
  echo >> "$tmp"
done
# The window's Markdown parser on pathological replies, without a JIT as in
# the window (node, from the frontend's packages).
if [ -d frontend/node_modules ]; then
  echo "bench: markdown" >&2
  if ! (cd frontend && node --jitless bench/markdown.mjs 2>/dev/null) >> "$tmp"; then
    echo -e "\n### markdown\n\n**failed to run** (see the make bench output)\n" >> "$tmp"
    status=1
  fi
  echo >> "$tmp"
fi
if [ -f build/e2e/bench.md ]; then
  cat build/e2e/bench.md >> "$tmp"
fi
mv "$tmp" "$out"
rm -rf "$bins"
trap - EXIT
echo "bench: wrote $out" >&2
exit $status
