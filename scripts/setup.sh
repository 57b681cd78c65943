#!/usr/bin/env bash
# Installs what building and testing Jarvis needs on Debian/Ubuntu, only what
# is missing. Other platforms: see the README's prerequisites.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(gcc pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev xvfb xauth xdotool imagemagick sqlite3 dbus dbus-x11 gnome-keyring libsecret-tools ripgrep curl procps iproute2 xclip libnotify-bin desktop-file-utils appstream wordnet-base systemd bubblewrap)

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: not a Debian system; install the prerequisites listed in README.md yourself" >&2
fi

command -v go >/dev/null || { echo "setup: Go is required (https://go.dev/dl/)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: Node.js and npm are required" >&2; exit 1; }
go mod download
# The wails CLI at the version go.mod pins (make wails-build; ~75 s once).
wails_ver=$(go list -m -f '{{.Version}}' github.com/wailsapp/wails/v2)
wails_bin="$(go env GOPATH)/bin/wails"
if ! { [ -x "$wails_bin" ] && "$wails_bin" version 2>/dev/null | grep -qx "$wails_ver"; }; then
  echo "setup: installing the wails CLI $wails_ver"
  go install "github.com/wailsapp/wails/v2/cmd/wails@$wails_ver"
fi
# The third-party clients tests/conformance drives the service with (npm
# standardwebhooks, eventsource), at the versions of their lock file;
# service/a2art's tests sign A2A push notifications with the same
# standardwebhooks.
(cd tests/conformance/testdata && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
# The third-party MCP servers app/mcp's tests run over stdio
# (@modelcontextprotocol/server-everything, server-filesystem), locked.
(cd app/mcp/testdata && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
# Real ACP adapters (codex-acp, claude-code-acp) service/acpagent's tests start.
(cd service/acpagent/testdata/adapters && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
