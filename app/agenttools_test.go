package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"jarvis/app/audit"
)

// TestCLIAgentToolsAreAudited: a tool a coding-agent CLI ran inside its
// own program (reported by the service as a tool.result with source
// "agent") gets an audit row that says it was not gated.
func TestCLIAgentToolsAreAudited(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted CLI is a POSIX shell script")
	}
	bin := t.TempDir()
	out := `{"type":"system","subtype":"init","session_id":"s1"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"rm -rf build"}}]},"parent_tool_use_id":null,"session_id":"s1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"","is_error":false}]},"parent_tool_use_id":null,"session_id":"s1"}
{"type":"result","subtype":"success","is_error":false,"result":"Cleaned.","session_id":"s1"}
`
	if err := os.WriteFile(filepath.Join(bin, "out.jsonl"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\ncat '"+filepath.Join(bin, "out.jsonl")+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	d := newRealDesktop(t, 60, "", `{"agentId":"coder","displayName":"Coder","chat":{"provider":"claude-cli"}}`)
	s, err := d.app.NewSession("coder")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	if err := d.app.Send(s.SessionID, "clean up"); err != nil {
		t.Fatal(err)
	}
	var es []audit.Entry
	for deadline := time.Now().Add(15 * time.Second); len(es) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if es, err = d.runner.Audit().List(context.Background(), audit.Filter{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(es) != 1 {
		t.Fatalf("audit rows %+v, want one", es)
	}
	e := es[0]
	var args map[string]string
	json.Unmarshal(e.Arguments, &args)
	if e.Tool != "Bash" || args["command"] != "rm -rf build" || e.DecidedBy != audit.ByAgent || e.Decision != audit.Allowed ||
		e.Reason != "ran inside the agent, not gated" || e.Class != "ungated" {
		t.Fatalf("audit row %+v", e)
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}
