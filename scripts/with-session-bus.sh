#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked GNOME
# keyring (a real Secret Service for go-keyring), and private XDG dirs so
# nothing touches the user's own profile. Without dbus-run-session it just
# runs the command: the keyring then reports itself unavailable and the code
# falls back to environment variables, as it must.
set -euo pipefail
if ! command -v dbus-run-session >/dev/null 2>&1 || ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
  exec "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="${XDG_CACHE_HOME:-$tmp/cache}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# Keep the Go build cache where it was: a private one would recompile everything.
export GOCACHE="$(go env GOCACHE)" GOMODCACHE="$(go env GOMODCACHE)"
exec dbus-run-session -- bash -c 'echo -n jarvis-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true; exec "$@"' _ "$@"
