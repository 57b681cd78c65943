#!/usr/bin/env bash
# Idle memory of the production window (build/bin/jarvis) against the same
# binary with an empty page (build tag blankpage, bench/blankpage): ROUNDS
# first runs of each, taken in turn so both see the same machine, each
# measured 6 s after start as the PSS of the app and its WebKit processes.
# Prints the rows of docs/BENCHMARKS.md's "production binary" table and the
# load average. Headless: its own D-Bus session, Xvfb (xvfb-run) and XDG dirs, unless
# DISPLAY is set and IDLE_MEMORY_HERE=1 (scripts/e2e.sh's session).
#   make build && bash scripts/idle-memory.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
OUT=${JARVIS_E2E_OUT:-$PWD/build/e2e}
[ -x build/bin/jarvis ] || { echo "idle-memory: build/bin/jarvis is missing (make build)" >&2; exit 1; }
mkdir -p "$OUT"
if [ ! -x build/bin/jarvis-blankpage ] || [ build/bin/jarvis -nt build/bin/jarvis-blankpage ]; then
  CGO_ENABLED=1 go build -tags desktop,production,webkit2_41,sqlite_fts5,blankpage -ldflags "-s -w" -o build/bin/jarvis-blankpage .
fi

if [ "${IDLE_MEMORY_HERE:-}" != 1 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  export XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" HOME="$tmp/home"
  mkdir -p "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$HOME"
  chmod 700 "$XDG_RUNTIME_DIR"
  export JARVIS_E2E_OUT="$OUT" NO_AT_BRIDGE=1 GDK_BACKEND=x11 IDLE_MEMORY_HERE=1
  unset JARVIS_TOKEN WAYLAND_DISPLAY JARVIS_SECRET_OPENAI JARVIS_SECRET_OPENAI_COMPATIBLE
  command -v xvfb-run >/dev/null || { echo "idle-memory: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
  timeout --kill-after=15 $((60 + ROUNDS * 30)) dbus-run-session -- \
    xvfb-run -a -s "-screen 0 1280x900x24 -nolisten tcp" bash scripts/idle-memory.sh "$ROUNDS"
  exit
fi

pss_tree() {
  local sum c
  sum=$(awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0)
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do sum=$((sum + $(pss_tree "$c"))); done
  echo "${sum:-0}"
}
# idle_kb BINARY NAME [SCREENSHOT]: a first run of BINARY (a fresh data
# dir), and 6 s later the PSS in kB of the app and its WebKit processes.
idle_kb() {
  local pid kb
  "$1" --data-dir "$XDG_DATA_HOME/$2" >"$OUT/$2.log" 2>&1 &
  pid=$!
  sleep 6
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "idle-memory: $1 exited early:" >&2
    tail -n 30 "$OUT/$2.log" >&2
    return 1
  fi
  if [ -n "${3:-}" ]; then import -window root "$3" >/dev/null || true; fi
  kb=$(pss_tree "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$kb"
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }

app=() blank=()
for i in $(seq "$ROUNDS"); do
  shot=""; [ "$i" = 1 ] && shot="$OUT/production-first-run.png"
  app+=("$(idle_kb ./build/bin/jarvis "jarvis-prod-$i" "$shot")")
  blank+=("$(idle_kb ./build/bin/jarvis-blankpage "jarvis-blankpage-$i")")
done
mb=$(( $(median "${app[@]}") / 1024 ))
floor=$(( $(median "${blank[@]}") / 1024 ))
runs=""; for k in "${app[@]}"; do runs+="${runs:+, }$((k / 1024))"; done
bruns=""; for k in "${blank[@]}"; do bruns+="${bruns:+, }$((k / 1024))"; done
met="❌"; [ "$mb" -lt 200 ] && met="✅"
printf '\n| production binary (build/bin/jarvis), first run | value | goal | met |\n|---|---|---|---|\n'
printf '| idle memory 6 s after start (app + WebKit processes, PSS), median of %s | %s MB | < 200 MB | %s |\n' "$ROUNDS" "$mb" "$met"
printf '| the runs | %s MB | | |\n' "$runs"
printf '| baseline: the same binary with an empty page instead of the UI (build tag blankpage), median of %s | %s MB | | |\n' "$ROUNDS" "$floor"
printf '| the baseline'"'"'s runs | %s MB | | |\n' "$bruns"
printf '| the UI'"'"'s own cost (the difference) | %s MB | | |\n' "$((mb - floor))"
printf '\nLoad average after the runs: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
grep -q "service started in-process" "$OUT/jarvis-prod-1.log" || { echo "idle-memory: the production binary did not start its service" >&2; exit 1; }
