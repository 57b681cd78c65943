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
)

// The desktop's tool runner gives the gate the workspace's files: a
// write_file prompt over an existing file carries the diff the window shows.
func TestWritePromptCarriesDiff(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")) // the audit chain's key file
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("milk\nbread\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "data", "audit.db"),
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
		done <- runner.Run(context.Background(), "s1", api.ToolCall{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"notes.txt","content":"milk\neggs\n"}`)})
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
	want := []gate.DiffLine{{Op: " ", Text: "milk"}, {Op: "-", Text: "bread"}, {Op: "+", Text: "eggs"}}
	if p.Diff == nil || len(p.Diff.Lines) != len(want) {
		t.Fatalf("diff %+v", p.Diff)
	}
	for i, l := range want {
		if p.Diff.Lines[i] != l {
			t.Fatalf("line %d: %+v, want %+v", i, p.Diff.Lines[i], l)
		}
	}
	if err := a.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Decision != "denied" {
		t.Fatalf("decision %+v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "milk\nbread\n" {
		t.Fatalf("the denied write changed the file: %q", b)
	}
}
