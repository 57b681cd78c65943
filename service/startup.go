package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"jarvis/internal/fsperm"
)

// DefaultDataDir is the platform data dir: $XDG_DATA_HOME/jarvis on Linux
// (~/.local/share/jarvis), ~/Library/Application Support/jarvis on macOS,
// %LocalAppData%\jarvis on Windows.
func DefaultDataDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "jarvis"), nil
		}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "jarvis"), nil
	default:
		if d := getenv("XDG_DATA_HOME"); d != "" {
			return filepath.Join(d, "jarvis"), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "jarvis"), nil
}

// DefaultConfigPath is <user config dir>/jarvis/config.json.
func DefaultConfigPath() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "jarvis", "config.json"), nil
}

// LoadToken returns the API token: JARVIS_TOKEN if set, else the content of
// <dataDir>/token, else a new random token written there with mode 0600.
// The data dir is made 0700 and an existing token file 0600 (fsperm).
func LoadToken(dataDir string, getenv func(string) string) (string, error) {
	if t := strings.TrimSpace(getenv("JARVIS_TOKEN")); t != "" {
		return t, nil
	}
	if err := fsperm.Dir(dataDir); err != nil {
		return "", err
	}
	path := filepath.Join(dataDir, "token")
	if err := fsperm.File(path, false); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading token file: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	// Write then rename so a concurrent reader never sees a partial token.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return tok, nil
}

// ErrNotLoopback is returned by Listen for a non-loopback address.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen opens a TCP listener on addr, refusing non-loopback addresses
// unless allowNonLoopback is set. The listener caps its connections
// (conncap.go): serve it with NewHTTPServer, whose handler chain trusts
// the connections of authenticated requests. Its connections may wait for
// their first request as long as idle ones (IdleFirstListener).
func Listen(addr string, allowNonLoopback bool) (net.Listener, error) {
	ln, err := listen(addr, allowNonLoopback)
	if err != nil {
		return nil, err
	}
	return newCapListener(IdleFirstListener(ln, idleTimeout), connCap(openFilesLimit())), nil
}

func listen(addr string, allowNonLoopback bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if !allowNonLoopback {
		ip := net.ParseIP(host)
		if host == "localhost" {
			ip = net.IPv4(127, 0, 0, 1)
			addr = net.JoinHostPort("127.0.0.1", addr[strings.LastIndex(addr, ":")+1:])
		}
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("--addr %q: %w: the service binds 127.0.0.1 or [::1] only (use --allow-non-loopback to override, at your own risk)", addr, ErrNotLoopback)
		}
	}
	return net.Listen("tcp", addr)
}

// Shutdown stops srv gracefully within d, then closes what is left.
func Shutdown(srv *http.Server, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
}
