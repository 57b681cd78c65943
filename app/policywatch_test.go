package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"jarvis/app/gate"
	"jarvis/internal/testwait"
)

// TestPolicyEditedOnDisk: policy.json edited outside the window (a
// terminal on a headless machine) is picked up without a restart; an
// edit that does not parse leaves the policy in force.
func TestPolicyEditedOnDisk(t *testing.T) {
	dir := t.TempDir()
	ws, data := filepath.Join(dir, "ws"), filepath.Join(dir, "data")
	os.MkdirAll(ws, 0o700)
	os.MkdirAll(data, 0o700)
	policy := filepath.Join(data, "policy.json")
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(data, "audit.db"), PolicyPath: policy, Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.WriteFile(policy, []byte(`{"rules":[{"tool":"mcp__every__echo","action":"allow"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The user's rules, besides the default ones for credential stores
	// (each with its note, app/gate/credentials.go).
	own := func() []gate.Rule {
		var out []gate.Rule
		for _, rule := range r.Policy().Rules {
			if rule.Note == "" {
				out = append(out, rule)
			}
		}
		return out
	}
	testwait.Until(t, "the edited policy in force", 10*time.Second, func() bool {
		p := own()
		return len(p) == 1 && p[0].Tool == "mcp__every__echo"
	})
	if err := os.WriteFile(policy, []byte(`{"rules":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"rules":[{"tool":"mcp__every__add","action":"allow"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the second edit in force", 10*time.Second, func() bool {
		p := own()
		return len(p) == 1 && p[0].Tool == "mcp__every__add"
	})
}
