package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/gate"
)

// An "always allow" answered through the window's binding saves a rule for
// that file only, in the policy file; the Permissions page lists it with
// the workspace, and revoking it removes it from the file.
func TestPermissionsScopedRuleListedAndRevoked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")) // the audit chain's key file
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	// The write overwrites a file: the prompt carries the diff the window shows.
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("milk\nbread\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "data", "policy.json")
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "data", "audit.db"), PolicyPath: policy,
		Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	a, err := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}, Tools: runner, Prompts: runner.Prompts()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan ToolDecision, 1)
	go func() {
		done <- runner.Run(context.Background(), "s1", api.ToolCall{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"notes.txt","content":"hi"}`)})
	}()
	var p gate.Prompt
	for deadline := time.Now().Add(5 * time.Second); ; {
		if ps := a.PendingPrompts(); len(ps) == 1 {
			p = ps[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no prompt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := p.Diff; d == nil || len(d.Lines) != 3 || d.Lines[0] != (gate.DiffLine{Op: "-", Text: "milk"}) || d.Lines[2] != (gate.DiffLine{Op: "+", Text: "hi"}) {
		t.Fatalf("the overwrite's diff: %+v", p.Diff)
	}
	if len(p.Scopes) != 2 || !strings.Contains(p.Scopes[0].Label, "notes.txt") {
		t.Fatalf("scopes %+v", p.Scopes)
	}
	if err := a.ResolvePromptScoped(p.ID, "always", "", 0); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Decision != "allowed" {
		t.Fatalf("decision %+v", d)
	}
	perms, err := a.PermissionRules()
	if err != nil {
		t.Fatal(err)
	}
	// The default credential-store rules come first (app/gate/credentials.go).
	n := len(gate.CredentialRules())
	want := gate.Rule{Tool: "write_file", Args: map[string]string{"path": "notes.txt"}, Action: gate.Allow}
	if perms.Workspace != runner.Workspace() || len(perms.Rules) != n+1 || perms.Rules[n].String() != want.String() {
		t.Fatalf("permissions %+v", perms)
	}
	onDisk, err := gate.LoadPolicy(policy)
	if err != nil || len(onDisk.Rules) != n+1 || onDisk.Rules[n].String() != want.String() {
		t.Fatalf("policy file %+v, %v", onDisk, err)
	}

	// Edit it to ask, then revoke it; a stale revoke is refused.
	ask := want
	ask.Action = gate.Ask
	if err := a.EditRule(n, want, ask); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeRule(n, want); !errors.Is(err, gate.ErrRuleChanged) {
		t.Fatalf("stale revoke: %v", err)
	}
	if err := a.RevokeRule(n, ask); err != nil {
		t.Fatal(err)
	}
	// A revoked default rule stays revoked.
	if err := a.RevokeRule(0, gate.CredentialRules()[0]); err != nil {
		t.Fatal(err)
	}
	if onDisk, err = gate.LoadPolicy(policy); err != nil || len(onDisk.Rules) != n-1 {
		t.Fatalf("policy file after revoke %+v, %v", onDisk, err)
	}
	// A window without tool calls says so in words.
	b, _ := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}})
	if _, err := b.PermissionRules(); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Fatalf("no tools: %v", err)
	}
}
