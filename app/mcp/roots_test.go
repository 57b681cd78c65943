package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRootsAreTheWorkspace: server-everything asks the client for its
// roots; it gets the workspace, and nothing else. Its log notifications
// are kept for the panel.
func TestRootsAreTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	m, _ := startManager(t, everythingConfig(t), func(o *Options) {
		o.Roots = []string{ws}
		o.Secret = func(string) (string, error) { return "x", nil }
	})
	waitFor(t, m, "the roots tool", func() bool { return hasTool(m, "mcp__every__get-roots-list") })
	out, err := m.Call(context.Background(), "r", "mcp__every__get-roots-list", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(out, "file://"+ws) || strings.Count(out, "file://") != 1 {
		t.Fatalf("roots: %q %v", out, err)
	}
	// The server logs that it got the roots: the panel shows its log.
	waitFor(t, m, "the server's log notification", func() bool {
		return strings.Contains(strings.Join(serverState(m, "every").Log, "\n"), "Roots updated: 1 root(s) received from client")
	})
}
