#!/usr/bin/env bash
# End-to-end test of the desktop app in the real WebKitGTK window, headless.
# Runs after `make build`: it builds the e2e binary (build tag e2e: the
# in-window self-test of main_e2e.go and frontend/e2e/selftest.js), starts
# Xvfb inside a private D-Bus session with private XDG dirs, runs the self-test
# under a watchdog, and smoke-starts the production binary. Screenshots and
# bench.md are kept in build/e2e/. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${JARVIS_E2E_OUT:-$ROOT/build/e2e}
TAGS=desktop,production,webkit2_41,sqlite_fts5
mkdir -p "$OUT" build/bin
rm -f "$OUT"/*.png "$OUT"/bench.md

for tool in Xvfb dbus-run-session import; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (apt-get install xvfb dbus imagemagick)" >&2; exit 1; }
done
if [ ! -f frontend/dist/index.html ]; then
  (cd frontend && npm ci --no-audit --no-fund && npm run build)
fi
echo "e2e: building build/bin/jarvis-e2e"
CGO_ENABLED=1 go build -tags "$TAGS,e2e" -ldflags "-X main.commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" -o build/bin/jarvis-e2e .
if [ -x build/bin/jarvis ]; then
  # The production binary with an empty page instead of the UI (assets_blank.go):
  # its idle memory is the floor the UI's own cost is read against.
  echo "e2e: building build/bin/jarvis-blankpage"
  CGO_ENABLED=1 go build -tags "$TAGS,blankpage" -ldflags "-s -w" -o build/bin/jarvis-blankpage .
fi

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" HOME="$tmp/home"
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$HOME"
chmod 700 "$XDG_RUNTIME_DIR"
export JARVIS_E2E_OUT="$OUT" NO_AT_BRIDGE=1 GDK_BACKEND=x11
unset JARVIS_TOKEN WAYLAND_DISPLAY JARVIS_SECRET_OPENAI JARVIS_SECRET_OPENAI_COMPATIBLE

# Inside the private bus: Xvfb on a free display, the self-test with a
# watchdog, then the production binary for a few seconds.
timeout --kill-after=15 300 dbus-run-session -- bash -s "$ROOT" <<'INNER'
set -euo pipefail
ROOT=$1
cd "$ROOT"
for n in $(seq 90 140); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { DISP=$n; break; }; done
Xvfb ":$DISP" -screen 0 1280x900x24 -nolisten tcp >"$XDG_RUNTIME_DIR/xvfb.log" 2>&1 &
XPID=$!
trap 'kill $XPID 2>/dev/null || true' EXIT
export DISPLAY=":$DISP"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISP" ] && break; sleep 0.1; done

echo "e2e: self-test in the real window on $DISPLAY"
status=0
timeout --kill-after=10 200 ./build/bin/jarvis-e2e --data-dir "$XDG_DATA_HOME/jarvis" --config "$XDG_CONFIG_HOME/none.json" \
  2>"$JARVIS_E2E_OUT/jarvis-e2e.log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "e2e: self-test failed (exit $status); last log lines:" >&2
  tail -n 30 "$JARVIS_E2E_OUT/jarvis-e2e.log" >&2 || true
  exit "$status"
fi
echo "e2e: restart on the same data and config: the setup must have been saved"
JARVIS_E2E_PHASE=restart timeout --kill-after=10 60 ./build/bin/jarvis-e2e --data-dir "$XDG_DATA_HOME/jarvis" --config "$XDG_CONFIG_HOME/none.json" \
  2>"$JARVIS_E2E_OUT/jarvis-e2e-restart.log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "e2e: restart check failed (exit $status); last log lines:" >&2
  tail -n 30 "$JARVIS_E2E_OUT/jarvis-e2e-restart.log" >&2 || true
  exit "$status"
fi

if [ -x build/bin/jarvis ]; then
  echo "e2e: smoke-starting the production binary (no provider configured), 3 first runs, and the blank-page floor"
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
    "$1" --data-dir "$XDG_DATA_HOME/$2" >"$JARVIS_E2E_OUT/$2.log" 2>&1 &
    pid=$!
    sleep 6
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "e2e: $1 exited early:" >&2
      tail -n 30 "$JARVIS_E2E_OUT/$2.log" >&2
      return 1
    fi
    if [ -n "${3:-}" ]; then import -window root "$3" >/dev/null || true; fi
    kb=$(pss_tree "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    echo "$kb"
  }
  median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  # Idle memory of the app as shipped (no test harness in the process): the
  # same PSS sum as the e2e build's figure, the median of three first runs,
  # taken in turn with the blank-page build so both see the same machine.
  app=() blank=()
  for i in 1 2 3; do
    shot=""; [ "$i" = 1 ] && shot="$JARVIS_E2E_OUT/production-first-run.png"
    app+=("$(idle_kb ./build/bin/jarvis "jarvis-prod-$i" "$shot")")
    blank+=("$(idle_kb ./build/bin/jarvis-blankpage "jarvis-blankpage-$i")")
  done
  mb=$(( $(median "${app[@]}") / 1024 ))
  floor=$(( $(median "${blank[@]}") / 1024 ))
  runs=""; for k in "${app[@]}"; do runs+="${runs:+, }$((k / 1024))"; done
  met="❌"; [ "$mb" -lt 200 ] && met="✅"
  {
    printf '\n| production binary (build/bin/jarvis), first run | value | goal | met |\n|---|---|---|---|\n'
    printf '| idle memory 6 s after start (app + WebKit processes, PSS), median of 3 | %s MB | < 200 MB | %s |\n' "$mb" "$met"
    printf '| the three runs | %s MB | | |\n' "$runs"
    printf '| baseline: the same binary with an empty page instead of the UI (build tag blankpage), median of 3 | %s MB | | |\n' "$floor"
    printf '| the UI'"'"'s own cost (the difference) | %s MB | | |\n' "$((mb - floor))"
  } >>"$JARVIS_E2E_OUT/bench.md"
  echo "e2e: production binary idle memory ${mb} MB (PSS of its process tree; ${floor} MB with a blank page)"
  grep -q "service started in-process" "$JARVIS_E2E_OUT/jarvis-prod-1.log" || { echo "e2e: production binary did not start its service" >&2; exit 1; }
fi

if [ -x build/bin/jarvis ] && [ -x build/bin/jarvis-service ]; then
  echo "e2e: the production binary against a running jarvis-service (--service-url)"
  SDIR="$XDG_DATA_HOME/jarvis-svc"
  ./build/bin/jarvis-service --addr 127.0.0.1:0 --data-dir "$SDIR" --config "$XDG_CONFIG_HOME/none.json" \
    >"$XDG_RUNTIME_DIR/svc.out" 2>"$JARVIS_E2E_OUT/jarvis-service.log" &
  SPID=$!
  for _ in $(seq 100); do grep -q "listening on" "$XDG_RUNTIME_DIR/svc.out" && break; sleep 0.1; done
  URL=$(sed -n 's/^jarvis-service listening on //p' "$XDG_RUNTIME_DIR/svc.out")
  [ -n "$URL" ] || { echo "e2e: jarvis-service did not start" >&2; kill $SPID; exit 1; }
  ./build/bin/jarvis --service-url "$URL" --data-dir "$SDIR" 2>"$JARVIS_E2E_OUT/jarvis-service-url.log" &
  APID=$!
  sleep 5
  alive=1; kill -0 "$APID" 2>/dev/null || alive=0
  # The window opened its session list with the service's token: the
  # service saw authenticated requests and no 401.
  import -window root "$JARVIS_E2E_OUT/service-url.png" || true
  kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null || true
  kill "$SPID"; wait "$SPID" 2>/dev/null || true
  if [ "$alive" -ne 1 ]; then
    echo "e2e: the app exited with --service-url:" >&2; tail -n 20 "$JARVIS_E2E_OUT/jarvis-service-url.log" >&2; exit 1
  fi
fi
INNER
echo "e2e: 1 passed, 0 failed (screenshots and bench.md in ${OUT#$ROOT/})"
