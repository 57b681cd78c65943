package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/internal/testwait"
)

// markedConfig is an mcp.json running the fake server as name, which
// writes mark when it starts.
func markedConfig(t *testing.T, name, mark string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		name: map[string]any{"command": exe, "env": map[string]string{"JARVIS_MCP_FAKE": "crash", "JARVIS_MCP_FAKE_MARK": mark}},
	}})
	return string(b)
}

// TestEditedConfigStartsNothingUntilApproved: an mcp.json entry written by
// anything but Jarvis's own UI (a tool's write_file, an editor, another
// program) is picked up by the reload but not started: it waits, showing
// the command it would run, until the user approves that very entry. A
// later change of the approved entry waits again.
func TestEditedConfigStartsNothingUntilApproved(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "started")
	m, path := startManager(t, `{"mcpServers":{}}`, nil)
	if err := os.WriteFile(path, []byte(markedConfig(t, "x", mark)), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the reload", func() bool { return serverState(m, "x").Name == "x" })
	s := serverState(m, "x")
	if s.State != "approval" {
		t.Fatalf("an entry written outside Jarvis was applied: state %q", s.State)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the server ran before it was approved")
	}
	exe, _ := os.Executable()
	if s.Approval == nil || !strings.Contains(s.Approval.Launch, exe) || !strings.Contains(strings.Join(s.Approval.Env, " "), "JARVIS_MCP_FAKE=crash") || s.Approval.Changed {
		t.Fatalf("what the approval shows: %+v", s.Approval)
	}
	if err := m.ApproveConfig(strings.Repeat("0", 64)); err == nil {
		t.Fatal("an approval of another hash was taken")
	}
	if err := m.ApproveConfig(s.Approval.Hash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the approved server", func() bool { return hasTool(m, "mcp__x__echo") })
	testwait.Until(t, "the mark of the started server", 10*time.Second, func() bool { _, err := os.Stat(mark); return err == nil })

	// The approved entry is changed outside Jarvis: it stops and waits.
	changed := strings.Replace(markedConfig(t, "x", mark), `"crash"`, `"noise"`, 1)
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the changed entry waiting", func() bool { return serverState(m, "x").State == "approval" })
	if hasTool(m, "mcp__x__echo") || !serverState(m, "x").Approval.Changed {
		t.Fatalf("a changed entry kept running: %+v", serverState(m, "x"))
	}
}

// TestServerAddedInJarvisStarts: a server added through Jarvis's own UI
// starts without a second confirmation; while an outside change waits,
// adding one is refused (it would approve that change too).
func TestServerAddedInJarvisStarts(t *testing.T) {
	m, path := startManager(t, `{"mcpServers":{}}`, nil)
	exe, _ := os.Executable()
	entry, _ := json.Marshal(map[string]any{"command": exe, "env": map[string]string{"JARVIS_MCP_FAKE": "crash"}})
	if err := m.AddServer("added", entry); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the added server", func() bool { return hasTool(m, "mcp__added__echo") })
	if err := m.AddServer("bad", json.RawMessage(`{"command":"x","url":"http://h"}`)); err == nil || !strings.Contains(err.Error(), "give either command") {
		t.Fatalf("a bad entry: %v", err)
	}

	b, _ := os.ReadFile(path)
	outside := strings.Replace(string(b), `"mcpServers": {`, `"mcpServers": {"other": {"command": "/bin/true"},`, 1)
	if err := os.WriteFile(path, []byte(outside), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "the outside change waiting", func() bool { return serverState(m, "other").State == StateApproval })
	if err := m.AddServer("third", entry); err == nil || !strings.Contains(err.Error(), "wait for your approval") {
		t.Fatalf("adding beside a waiting change: %v", err)
	}
	if serverState(m, "other").State != StateApproval {
		t.Fatal("the outside change was approved")
	}
}
