#!/usr/bin/env bash
# Tests the Debian package `make package` wrote into DIR (default build/bin):
# its control data and file list (dpkg-deb), its desktop entry
# (desktop-file-validate) and AppStream metainfo (appstreamcli validate
# --no-net), then installs it into a scratch root (dpkg -x) and starts the
# installed binary under Xvfb in a private D-Bus session with private XDG
# dirs: it must come up (its service starts, it stays alive with a window),
# and a second launch on the same data dir must hand over to it and exit
# without opening the database. A screenshot is kept in build/e2e/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=${1:-build/bin}
OUT=${JARVIS_E2E_OUT:-$ROOT/build/e2e}
mkdir -p "$OUT"
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
for tool in dpkg-deb desktop-file-validate appstreamcli Xvfb dbus-run-session import; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done

version=$(sed -n 's/.*"productVersion": *"\([^"]*\)".*/\1/p' wails.json)
deb=$(ls -t "$DIR"/jarvis_"$version"_*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || fail "no $DIR/jarvis_${version}_*.deb (run make package)"
echo "package-test: $deb"

# Control data: name, version, the runtime libraries (not -dev).
ctl=$(dpkg-deb --field "$deb" Package Version Depends)
echo "$ctl" | sed 's/^/  /'
echo "$ctl" | grep -qx "Package: jarvis" || fail "Package is not jarvis"
echo "$ctl" | grep -qx "Version: $version" || fail "Version is not $version (wails.json)"
deps=$(dpkg-deb --field "$deb" Depends)
for d in libwebkit2gtk-4.1-0 libgtk-3-0; do
  echo "$deps" | grep -qw -- "$d" || fail "Depends lacks $d"
done
if echo "$deps" | grep -q -- "-dev"; then fail "Depends names a -dev package: $deps"; fi

# The file list.
contents=$(dpkg-deb --contents "$deb")
list=$(echo "$contents" | awk '{print $NF}')
want=(./usr/bin/jarvis ./usr/bin/jarvis-confine ./usr/share/applications/org.jarvis.Jarvis.desktop ./usr/share/metainfo/org.jarvis.Jarvis.metainfo.xml
  ./usr/share/icons/hicolor/scalable/apps/jarvis.svg)
for s in 16 24 32 48 64 128 256 512; do want+=("./usr/share/icons/hicolor/${s}x${s}/apps/jarvis.png"); done
for f in "${want[@]}"; do echo "$list" | grep -qx -- "$f" || fail "the package lacks $f"; done
grep -q -- '^-rwxr-xr-x root/root .* \./usr/bin/jarvis$' <<<"$contents" || fail "/usr/bin/jarvis is not root-owned 0755"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg -x "$deb" "$tmp/root"
desktop-file-validate "$tmp/root/usr/share/applications/org.jarvis.Jarvis.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$tmp/root/usr/share/metainfo/org.jarvis.Jarvis.metainfo.xml" || fail "appstreamcli validate"
for s in 16 48 256 512; do
  got=$(identify -format '%wx%h' "$tmp/root/usr/share/icons/hicolor/${s}x${s}/apps/jarvis.png")
  [ "$got" = "${s}x${s}" ] || fail "the ${s}x${s} icon is $got"
done
bin="$tmp/root/usr/bin/jarvis"
"$bin" --version | tee "$tmp/version"
grep -q "^Jarvis $version (commit [0-9a-f]" "$tmp/version" || fail "--version does not say Jarvis $version and a commit"

# Start the installed binary headless.
export XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" HOME="$tmp/home"
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$HOME"
chmod 700 "$XDG_RUNTIME_DIR"
export NO_AT_BRIDGE=1 GDK_BACKEND=x11 OUT
unset JARVIS_TOKEN WAYLAND_DISPLAY JARVIS_SECRET_OPENAI JARVIS_SECRET_OPENAI_COMPATIBLE
timeout --kill-after=15 120 dbus-run-session -- bash -s "$bin" <<'INNER'
set -euo pipefail
bin=$1
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
for n in $(seq 141 190); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { DISP=$n; break; }; done
Xvfb ":$DISP" -screen 0 1280x900x24 -nolisten tcp >"$XDG_RUNTIME_DIR/xvfb.log" 2>&1 &
XPID=$!
export DISPLAY=":$DISP"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISP" ] && break; sleep 0.1; done
"$bin" >"$OUT/package-first.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; kill $XPID 2>/dev/null || true' EXIT
for _ in $(seq 150); do grep -q "service started in-process" "$OUT/package-first.log" && break; sleep 0.1; done
grep -q "service started in-process" "$OUT/package-first.log" || { tail -n 20 "$OUT/package-first.log" >&2; fail "the installed binary did not start its service"; }
sleep 3
kill -0 "$PID" 2>/dev/null || { tail -n 20 "$OUT/package-first.log" >&2; fail "the installed binary exited"; }
xdotool search --sync --onlyvisible --name '^Jarvis$' >/dev/null 2>&1 || fail "no visible window named Jarvis"
import -window root "$OUT/package-installed.png" >/dev/null 2>&1 || true
echo "package-test: the installed binary is up (pid $PID, window shown)"

# A second launch on the same (default) data dir hands over and exits 0.
status=0
timeout 30 "$bin" --workspace "$XDG_RUNTIME_DIR/second-ws" >"$OUT/package-second.log" 2>&1 || status=$?
[ "$status" -eq 0 ] || { cat "$OUT/package-second.log" >&2; fail "the second launch exited $status"; }
grep -q "already running with this data dir" "$OUT/package-second.log" || fail "the second launch did not say it handed over"
if grep -q "service started" "$OUT/package-second.log"; then fail "the second launch started a service on the same database"; fi
for _ in $(seq 50); do grep -q "a second launch handed over to this window" "$OUT/package-first.log" && break; sleep 0.1; done
grep "a second launch handed over to this window" "$OUT/package-first.log" | grep -q -- "--workspace" || fail "the first instance did not receive the second launch's arguments"
kill -0 "$PID" 2>/dev/null || fail "the first instance died at the handover"
echo "package-test: a second launch handed its arguments to the running window and exited"
kill "$PID"; wait "$PID" 2>/dev/null || true
INNER
echo "package-test: 1 passed, 0 failed"
