package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRootsAreTheWorkspace: server-everything asks the client for its
// roots; it gets the workspace, and nothing else.
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
}
