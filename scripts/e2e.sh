#!/usr/bin/env bash
# End-to-end test of the desktop app in the real WebKitGTK window, headless.
# Runs after `make build`: it builds the e2e binary (build tag e2e: the
# in-window self-test of internal/e2e and frontend/e2e/selftest.js), starts
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
# JARVIS_E2E_WATCHDOG: the self-test's own limit in seconds (default 150;
# more on a loaded machine); the timeouts below follow it.
WATCHDOG=${JARVIS_E2E_WATCHDOG:-150}
export JARVIS_E2E_WATCHDOG=$WATCHDOG
timeout --kill-after=15 $((WATCHDOG * 2 + 150)) dbus-run-session -- bash -s "$ROOT" <<'INNER'
set -euo pipefail
ROOT=$1
cd "$ROOT"
for n in $(seq 90 140); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { DISP=$n; break; }; done
Xvfb ":$DISP" -screen 0 1920x1080x24 -nolisten tcp >"$XDG_RUNTIME_DIR/xvfb.log" 2>&1 &
XPID=$!
trap 'kill $XPID 2>/dev/null || true' EXIT
export DISPLAY=":$DISP"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISP" ] && break; sleep 0.1; done

echo "e2e: self-test in the real window on $DISPLAY"
status=0
timeout --kill-after=10 $((JARVIS_E2E_WATCHDOG + 50)) ./build/bin/jarvis-e2e --data-dir "$XDG_DATA_HOME/jarvis" --config "$XDG_CONFIG_HOME/none.json" \
  2>"$JARVIS_E2E_OUT/jarvis-e2e.log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "e2e: self-test failed (exit $status); last log lines:" >&2
  tail -n 30 "$JARVIS_E2E_OUT/jarvis-e2e.log" >&2 || true
  exit "$status"
fi
echo "e2e: restart on the same data and config: the setup must have been saved"
JARVIS_E2E_PHASE=restart timeout --kill-after=10 $((JARVIS_E2E_WATCHDOG / 2 + 60)) ./build/bin/jarvis-e2e --data-dir "$XDG_DATA_HOME/jarvis" --config "$XDG_CONFIG_HOME/none.json" \
  2>"$JARVIS_E2E_OUT/jarvis-e2e-restart.log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "e2e: restart check failed (exit $status); last log lines:" >&2
  tail -n 30 "$JARVIS_E2E_OUT/jarvis-e2e-restart.log" >&2 || true
  exit "$status"
fi

if [ -x build/bin/jarvis ]; then
  echo "e2e: smoke-starting the production binary (no provider configured), 3 first runs, and the blank-page floor"
  # Idle memory of the app as shipped (no test harness in the process), in
  # this session: scripts/idle-memory.sh's table goes to bench.md.
  IDLE_MEMORY_HERE=1 bash scripts/idle-memory.sh 3 >"$XDG_RUNTIME_DIR/idle.md"
  cat "$XDG_RUNTIME_DIR/idle.md" >>"$JARVIS_E2E_OUT/bench.md"
  echo "e2e: production binary $(sed -n 's/^| idle memory 6 s after start.*| \([0-9]*\) MB | < 200.*/idle memory \1 MB (PSS of its process tree)/p' "$XDG_RUNTIME_DIR/idle.md")"
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
# The README's pictures: the conversation with a permission prompt, light and
# dark, taken by this run (the window at its fixed size on the Xvfb screen,
# the screen's empty border cut off).
mkdir -p "$ROOT/docs/images"
convert "$OUT/prompt.png" -trim +repage "$ROOT/docs/images/conversation-prompt.png"
convert "$OUT/prompt-dark.png" -trim +repage "$ROOT/docs/images/conversation-prompt-dark.png"
echo "e2e: 1 passed, 0 failed (screenshots and bench.md in ${OUT#$ROOT/})"
