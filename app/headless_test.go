package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
)

// TestHeadlessFollowsNewSessionsAndNeverReplaysOldCalls: a headless gate
// started after a session's calls were answered does not run them again;
// a session created while it runs is followed from its first event.
func TestHeadlessFollowsNewSessionsAndNeverReplaysOldCalls(t *testing.T) {
	d := newRealDesktop(t, 60, `{"rules":[{"tool":"write_file","action":"allow"}]}`)
	old, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(old.SessionID); err != nil {
		t.Fatal(err)
	}
	// The window's gate answers the old session's call.
	if _, err := d.c.Chat(context.Background(), old.SessionID, `[[tool write_file {"path":"old.txt","content":"once"}]]`); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(d.ws, "old.txt")); err != nil {
		t.Fatal(err)
	}

	// A second gate, headless, on its own workspace and audit log.
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o700)
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"write_file","action":"allow"}]}`), 0o600)
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: policy, Headless: true,
		Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	Shutdown(d.app) // one gate per service: the window goes away
	runHeadless(t, d.c, runner)

	r, err := d.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j_new"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.c.Chat(context.Background(), r.GeneralSessionID, `[[tool write_file {"path":"new.txt","content":"headless"}]]`)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "headless" {
		t.Fatalf("new.txt = %q, %v (reply %+v)", b, err, res)
	}
	if _, err := os.Stat(filepath.Join(ws, "old.txt")); err == nil {
		t.Fatal("the headless gate ran the old session's call again")
	}
	es, err := runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 1 || es[0].SessionID != r.GeneralSessionID || es[0].Decision != audit.Allowed {
		t.Fatalf("headless audit %+v %v, want only the new session's call", es, err)
	}
}

// runHeadless serves the service's tool requests with runner, as `jarvis
// --headless` does, until the test ends; then it closes runner.
func runHeadless(t *testing.T, c *api.Client, runner *Runner) {
	t.Helper()
	t.Cleanup(func() { runner.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunHeadless(ctx, HeadlessOptions{Client: c, Tools: runner, Poll: 20 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
}
