package service

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

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
