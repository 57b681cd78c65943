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

for tool in Xvfb dbus-run-session import sqlite3; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (apt-get install xvfb dbus imagemagick sqlite3)" >&2; exit 1; }
done
if [ ! -f frontend/dist/index.html ]; then
  (cd frontend && npm ci --no-audit --no-fund && npm run build)
fi
echo "e2e: building build/bin/jarvis-e2e"
CGO_ENABLED=1 go build -tags "$TAGS,e2e" -ldflags "-X main.commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" -o build/bin/jarvis-e2e .
# The scripted model of the scheduled-tasks scenario, as its own process: the
# window, the headless Jarvis and the window again all reach it.
go build -o build/bin/openai-peer ./internal/testpeer/cmd/openai-peer
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
timeout --kill-after=15 $((WATCHDOG * 4 + 300)) dbus-run-session -- bash -s "$ROOT" <<'INNER'
set -euo pipefail
ROOT=$1
cd "$ROOT"
for n in $(seq 90 140); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { DISP=$n; break; }; done
Xvfb ":$DISP" -screen 0 1920x1080x24 -nolisten tcp >"$XDG_RUNTIME_DIR/xvfb.log" 2>&1 &
XPID=$!
BGPIDS="" # the scripted model and the headless Jarvis of the tasks scenario, while they run
trap 'kill $XPID $BGPIDS 2>/dev/null || true' EXIT
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

# The scheduled-tasks scenario (docs/guide/tasks.md, "Checked in the real
# window"), on a data dir and config of its own: in the window the user asks
# for "every weekday at 8:00, summarise yesterday's notes into today's note"
# and allows the task; the window closes; the computer "sleeps" through a
# weekday 8:00; the production binary, headless as the systemd unit runs it,
# catches the missed run up once and its write of today's note waits in the
# Inbox; the window opens again, the approval is given in its Inbox, the run
# goes on and its result is there.
[ -x build/bin/jarvis ] || { echo "e2e: build/bin/jarvis is missing (make build): the tasks scenario runs it headless" >&2; exit 1; }
echo "e2e: scheduled tasks: asked for in the window, run while it is closed, approved and read in the Inbox"
TDIR="$XDG_DATA_HOME/jarvis-tasks"
TCONF="$XDG_CONFIG_HOME/tasks/config.json"
mkdir -p "$TDIR/workspace/notes" "$(dirname "$TCONF")"
# Today and yesterday in the task's time zone (the scripted model schedules
# it in Europe/Berlin); yesterday's note is there to be summarised.
TODAY=$(TZ=Europe/Berlin date +%F)
YESTERDAY=$(date -d "$TODAY -1 day" +%F)
printf 'Worked on the garden; called Anna about the lake trip.\n' >"$TDIR/workspace/notes/$YESTERDAY.md"
./build/bin/openai-peer -weekday-notes "$TODAY" >"$XDG_RUNTIME_DIR/peer.out" 2>"$JARVIS_E2E_OUT/openai-peer.log" &
PEERPID=$!
BGPIDS="$PEERPID"
for _ in $(seq 100); do grep -q "listening on" "$XDG_RUNTIME_DIR/peer.out" && break; sleep 0.1; done
PEER=$(sed -n 's/^openai-peer listening on //p' "$XDG_RUNTIME_DIR/peer.out")
[ -n "$PEER" ] || { echo "e2e: openai-peer did not start" >&2; exit 1; }
export JARVIS_E2E_PEER_URL="$PEER/v1" JARVIS_E2E_TASK_DAY="$TODAY"
tasks_phase() { # tasks_phase PHASE: the self-test's phase on the tasks data dir
  local st=0
  JARVIS_E2E_PHASE=$1 timeout --kill-after=10 $((JARVIS_E2E_WATCHDOG + 50)) ./build/bin/jarvis-e2e --data-dir "$TDIR" --config "$TCONF" \
    2>"$JARVIS_E2E_OUT/jarvis-e2e-$1.log" || st=$?
  if [ "$st" -ne 0 ]; then
    echo "e2e: the $1 phase failed (exit $st); last log lines:" >&2
    tail -n 30 "$JARVIS_E2E_OUT/jarvis-e2e-$1.log" >&2 || true
    exit "$st"
  fi
}
tasks_phase tasks
# The simulated sleep: the task's occurrences are settled up to its creation
# (tasks.settled_until, service/tasks); set a week back, as if the computer
# had slept through the weekdays since, the scheduler finds the missed 8:00s
# and runs the newest once (its catch-up rule), never a burst.
sqlite3 "$TDIR/jarvis.db" "UPDATE tasks SET settled_until = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-7 days') WHERE name = 'Daily note'"
[ "$(sqlite3 "$TDIR/jarvis.db" "SELECT count(*) FROM tasks WHERE name = 'Daily note'")" = 1 ] || { echo "e2e: the tasks phase stored no task \"Daily note\"" >&2; exit 1; }
./build/bin/jarvis --headless --data-dir "$TDIR" --config "$TCONF" 2>"$JARVIS_E2E_OUT/jarvis-headless.log" &
HPID=$!
BGPIDS="$PEERPID $HPID"
# Started before `jarvis inbox` is asked: with no Jarvis to ask, it reads the
# database itself, and once (of eight runs) the headless process's open of
# that database failed meanwhile ("database is locked"), leaving its service
# failed for good. Not fixed in the product yet; here the test waits.
for _ in $(seq 240); do
  grep -q "headless: following every session" "$JARVIS_E2E_OUT/jarvis-headless.log" && break
  kill -0 "$HPID" 2>/dev/null || break
  sleep 0.5
done
grep -q "headless: following every session" "$JARVIS_E2E_OUT/jarvis-headless.log" || { echo "e2e: jarvis --headless did not start:" >&2; tail -n 20 "$JARVIS_E2E_OUT/jarvis-headless.log" >&2; exit 1; }
waited=0
for _ in $(seq 240); do # up to about two minutes on a busy machine
  if ./build/bin/jarvis inbox --data-dir "$TDIR" >"$XDG_RUNTIME_DIR/inbox.txt" 2>&1 && grep -q "approval pending  Daily note: waiting for your approval" "$XDG_RUNTIME_DIR/inbox.txt"; then
    waited=1
    break
  fi
  kill -0 "$HPID" 2>/dev/null || break
  sleep 0.5
done
if [ "$waited" -ne 1 ]; then
  echo "e2e: no approval of the task's run waited in the Inbox; jarvis inbox says:" >&2
  cat "$XDG_RUNTIME_DIR/inbox.txt" >&2 || true
  tail -n 30 "$JARVIS_E2E_OUT/jarvis-headless.log" >&2 || true
  exit 1
fi
[ "$(grep -c "occurrence claimed" "$JARVIS_E2E_OUT/jarvis-headless.log")" = 1 ] || { echo "e2e: the headless Jarvis did not catch the missed run up exactly once" >&2; grep "tasks:" "$JARVIS_E2E_OUT/jarvis-headless.log" >&2; exit 1; }
[ ! -e "$TDIR/workspace/notes/$TODAY.md" ] || { echo "e2e: today's note was written before the approval" >&2; exit 1; }
sed 's/^/e2e:   /' "$XDG_RUNTIME_DIR/inbox.txt"
# The headless Jarvis stops (as at log-out); the approval stays in the Inbox.
kill -TERM "$HPID"
hst=0
wait "$HPID" || hst=$?
BGPIDS="$PEERPID"
[ "$hst" -eq 0 ] || { echo "e2e: jarvis --headless exited $hst on SIGTERM" >&2; tail -n 20 "$JARVIS_E2E_OUT/jarvis-headless.log" >&2; exit 1; }
tasks_phase tasks-inbox
kill "$PEERPID"; wait "$PEERPID" 2>/dev/null || true
BGPIDS=""

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
convert "$OUT/inbox-approval.png" -trim +repage "$ROOT/docs/images/inbox-approval.png"
echo "e2e: 1 passed, 0 failed (screenshots and bench.md in ${OUT#$ROOT/})"
