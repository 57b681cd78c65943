package mcp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatchFolderCreatedAfterStart: mcp.json is created after launch in a
// config folder that did not exist then; the Manager sees it.
func TestWatchFolderCreatedAfterStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config", "jarvis", "mcp.json")
	m, err := New(Options{ConfigPath: path, InitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fakeConfig(t, "late", "crash")), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the new file's server", func() bool { return serverState(m, "late").Name == "late" })
}
