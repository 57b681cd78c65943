package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"jarvis/api"
	"jarvis/app/audit"
)

// A session's tool cards get their decisions back from the audit log after
// a restart: one per call, the newest row winning, no other session's.
func TestSessionDecisionsFromTheAuditLog(t *testing.T) {
	lg, err := audit.Open(filepath.Join(t.TempDir(), "audit.db"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	args := json.RawMessage(`{"path":"a.txt"}`)
	for _, e := range []audit.Entry{
		{SessionID: "s1", ToolCallID: "c1", Tool: "write_file", Arguments: args, ProposedRisk: "risky", Class: "risky", Decision: audit.Allowed, DecidedBy: audit.ByUser, EditedArguments: json.RawMessage(`{"path":"b.txt"}`)},
		{SessionID: "s1", ToolCallID: "c2", Tool: "run_command", Arguments: args, Class: "risky", Decision: audit.Denied, DecidedBy: audit.ByPolicy, Reason: "policy rule: deny command rm *"},
		{SessionID: "s2", ToolCallID: "c3", Tool: "read_file", Arguments: args, Class: "safe", Decision: audit.Allowed, DecidedBy: audit.ByPolicy},
		{SessionID: "s1", ToolCallID: "c1", Tool: "write_file", Arguments: args, Class: "risky", Decision: audit.Withdrawn, DecidedBy: audit.ByService},
	} {
		if _, err := lg.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	a, err := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}, Audit: lg})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.SessionDecisions("s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ToolCallID != "c1" || got[0].Decision != audit.Withdrawn || got[0].DecidedBy != audit.ByService ||
		got[1].ToolCallID != "c2" || got[1].Decision != audit.Denied || got[1].Reason == "" {
		t.Fatalf("decisions %+v", got)
	}
	b, _ := New(Options{Client: api.NewClient("http://127.0.0.1:1", "tok", nil), Emit: func(string, any) {}})
	if _, err := b.SessionDecisions("s1"); err == nil {
		t.Fatal("no audit log, no error")
	}
}
