package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/gate"
	"jarvis/internal/testwait"
)

// The Permissions page's facts: a rule saved from a prompt names its chat
// and time (kept in policy.json), a rule added on the page says so, the
// current conversation's session grants are listed, and a denial's reason
// reaches the result the window posts to the service.
func TestPermissionsOriginsGrantsAndDenyReason(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
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
	call := func(id, name, args string, ans PromptAnswer) ToolDecision {
		t.Helper()
		done := make(chan ToolDecision, 1)
		go func() {
			done <- runner.Run(context.Background(), "s1", api.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)})
		}()
		var p gate.Prompt
		testwait.Until(t, "a prompt for "+id, 5*time.Second, func() bool {
			ps := a.PendingPrompts()
			if len(ps) == 1 {
				p = ps[0]
			}
			return len(ps) == 1
		})
		if err := a.AnswerPrompt(p.ID, ans); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	if d := call("c1", "write_file", `{"path":"a.txt","content":"x"}`, PromptAnswer{Choice: "always", Chat: "Pack for the lake trip"}); d.Decision != "allowed" {
		t.Fatalf("always: %+v", d)
	}
	if d := call("c2", "open_url", `{"url":"https://example.org/"}`, PromptAnswer{Choice: "session"}); d.Decision != "allowed" {
		t.Fatalf("session: %+v", d)
	}
	d := call("c3", "write_file", `{"path":"b.txt","content":"x"}`, PromptAnswer{Choice: "deny", Why: "not that file"})
	if d.Decision != "denied" || d.UserReason != "not that file" {
		t.Fatalf("deny with a reason: %+v", d)
	}
	if err := a.AddRule(gate.Rule{Tool: "run_command", Command: "make test", Action: gate.Allow}); err != nil {
		t.Fatal(err)
	}
	perms, err := a.PermissionRules()
	if err != nil {
		t.Fatal(err)
	}
	n := len(gate.CredentialRules())
	if len(perms.Rules) != n+2 {
		t.Fatalf("rules %+v", perms.Rules)
	}
	if o := perms.Rules[n].Origin; o == nil || o.Kind != gate.OriginPrompt || o.SessionID != "s1" || o.Chat != "Pack for the lake trip" || o.At.IsZero() {
		t.Fatalf("the prompt's rule has origin %+v", o)
	}
	if o := perms.Rules[n+1].Origin; o == nil || o.Kind != gate.OriginPage {
		t.Fatalf("the page's rule has origin %+v", o)
	}
	if perms.Rules[0].Origin != nil {
		t.Fatalf("a default rule has an origin: %+v", perms.Rules[0])
	}
	if len(perms.Grants) != 1 || perms.Grants[0].SessionID != "s1" || perms.Grants[0].Rule.Tool != "open_url" {
		t.Fatalf("grants %+v", perms.Grants)
	}
	known := map[string]bool{}
	for _, k := range perms.Tools {
		known[k.Name] = true
	}
	if !known["write_file"] || !known["run_command"] || !known["agents_message"] {
		t.Fatalf("Add rule's tools %+v lack an OS or service tool", perms.Tools)
	}
	onDisk, err := gate.LoadPolicy(policy)
	if err != nil || onDisk.Rules[n].Origin == nil || onDisk.Rules[n].Origin.Chat != "Pack for the lake trip" {
		t.Fatalf("policy.json lost the origin: %+v %v", onDisk.Rules, err)
	}
}
