package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"jarvis/app/audit"
)

// TestACPAgentThroughTheGate: an Agent Client Protocol agent (the scripted
// one of service/acpagent's tests, written with acp-go-sdk's agent side)
// works in the desktop's workspace; every file it reads or writes through
// its client and every permission it asks passes the desktop's gate and
// has its audit row. A read inside the workspace is safe (no prompt); a
// write prompts; a permission prompts, and a denial reaches the agent as
// its reject option.
func TestACPAgentThroughTheGate(t *testing.T) {
	d, chat := acpDesktop(t, nil)
	notes := filepath.Join(d.ws, "notes.txt")
	os.WriteFile(notes, []byte("buy milk"), 0o600)

	if got := <-chat("read " + notes); got != "read: buy milk" {
		t.Fatalf("read: %q", got)
	}

	reply := chat("write " + filepath.Join(d.ws, "out.txt") + " hello")
	p := d.waitPrompt(t)
	if p.Tool != "write_file" {
		t.Fatalf("prompt %+v, want write_file", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; got != "wrote "+filepath.Join(d.ws, "out.txt") {
		t.Fatalf("write: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(d.ws, "out.txt")); string(b) != "hello" {
		t.Fatalf("out.txt holds %q", b)
	}

	reply = chat("perm")
	p = d.waitPrompt(t)
	if p.Tool != "agent_permission" {
		t.Fatalf("prompt %+v, want agent_permission", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; got != "selected no" {
		t.Fatalf("permission denied, the agent got %q", got)
	}

	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]audit.Entry{}
	for _, e := range es {
		rows[e.Tool] = e
	}
	var perm map[string]any
	json.Unmarshal(rows["agent_permission"].Arguments, &perm)
	switch {
	case rows["read_file"].Decision != audit.Allowed || rows["read_file"].DecidedBy != audit.ByPolicy:
		t.Errorf("read row %+v", rows["read_file"])
	case rows["write_file"].Decision != audit.Allowed || rows["write_file"].DecidedBy != audit.ByUser:
		t.Errorf("write row %+v", rows["write_file"])
	case rows["agent_permission"].Decision != audit.Denied || perm["title"] != "Run rm -rf build" || perm["agent"] != "coder":
		t.Errorf("permission row %+v", rows["agent_permission"])
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}

	// The agent's write has a checkpoint, as every write through the gate
	// does, and undo takes it back (out.txt did not exist before).
	if rows["write_file"].Checkpoint == "" {
		t.Errorf("the agent's write has no checkpoint: %+v", rows["write_file"])
	}
	turns, err := d.runner.Checkpoints().List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var turnID string
	for _, tu := range turns {
		for _, f := range tu.Files {
			if filepath.Base(f.Path) == "out.txt" {
				turnID = tu.TurnID
			}
		}
	}
	if turnID == "" {
		t.Fatalf("no changed turn lists out.txt: %+v", turns)
	}
	if _, err := d.runner.Undo(context.Background(), turnID, nil, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.ws, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("out.txt is still there after the undo (%v)", err)
	}
}

// acpDesktop is a real desktop (gate, audit, workspace) whose agent
// "coder" is the scripted ACP agent working in the workspace, with a
// session open; chat sends a message and yields the reply (or the error).
func acpDesktop(t *testing.T, tweak func(*ToolRunnerOptions)) (*realDesktop, func(string) <-chan string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	bin := filepath.Join(t.TempDir(), "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../service/acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	d := newRealDesktopWith(t, 60, "", tweak, `{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":"`+bin+`","workDir":"{{WS}}"}}`)
	s, err := d.app.NewSession("coder")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	return d, func(text string) <-chan string {
		out := make(chan string, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := d.c.Chat(ctx, s.SessionID, text)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			out <- r.Assistant.Parts[0].Text
		}()
		return out
	}
}
