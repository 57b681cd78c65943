package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

// fakeClaude puts a scripted claude first on PATH. It appends its argv
// (one argument per line, then "---") to argv.log and prints out.jsonl;
// when the file "hang" exists it hangs after the first line.
func fakeClaude(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("scripted CLIs are POSIX shell scripts")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nD='" + dir + "'\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$D/argv.log\"\necho --- >> \"$D/argv.log\"\n" +
		"if [ -f \"$D/hang\" ]; then head -n 1 \"$D/out.jsonl\"; exec sleep 30; fi\ncat \"$D/out.jsonl\"\n"
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "out.jsonl"), []byte(testpeer.ClaudeTurn), 0o644)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func argvRuns(t *testing.T, dir string) [][]string {
	b, _ := os.ReadFile(filepath.Join(dir, "argv.log"))
	var out [][]string
	for _, run := range strings.Split(strings.TrimSuffix(string(b), "---\n"), "---\n") {
		out = append(out, strings.Split(strings.TrimSuffix(run, "\n"), "\n"))
	}
	return out
}

const cliAgents = `[
 {"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","description":"writes code","chat":{"provider":"claude-cli","model":"sonnet"}},
 {"agentId":"codexer","displayName":"Codexer","chat":{"provider":"codex-cli"}}
]`

func TestCLIAgentTurnsKeepTheConversation(t *testing.T) {
	dir := fakeClaude(t)
	e := newEnv(t)
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	evs := e.agChat(sid, "list files")
	if d, f := text(evs, api.EventDelta), text(evs, api.EventFinal); f != "Let me look.\n\nOne file: a.go." || d != f {
		t.Fatalf("deltas %q final %q (%v)", d, f, types(evs))
	}
	var status api.StatusEvent
	for _, ev := range evs {
		if ev.Type == api.EventStatus {
			status = decode[api.StatusEvent](t, ev.Data)
		}
	}
	if status.Kind != "tool" || !strings.Contains(status.Text, "Bash") {
		t.Fatalf("tool status %+v", status)
	}
	tr := e.agTranscript(sid)
	var meta struct {
		CLI struct {
			Provider, ResumeID string
		}
		ToolCallCount int
		ToolCalls     []struct{ Name string }
		ThinkingText  string
	}
	json.Unmarshal(tr[1].Meta, &meta)
	if meta.CLI.Provider != "claude-cli" || meta.CLI.ResumeID != "sess-1" || meta.ToolCallCount != 1 || meta.ToolCalls[0].Name != "Bash" || meta.ThinkingText != "Look first." {
		t.Fatalf("meta %s", tr[1].Meta)
	}
	e.agChat(sid, "and now?")
	runs := argvRuns(t, dir)
	if len(runs) != 2 {
		t.Fatalf("runs %q", runs)
	}
	if runs[0][0] != "-p" || runs[0][1] != "list files" || slices.Contains(runs[0], "--resume") || !slices.Contains(runs[0], "sonnet") {
		t.Fatalf("first argv %q", runs[0])
	}
	if i := slices.Index(runs[0], "--append-system-prompt"); i < 0 || !strings.HasPrefix(runs[0][i+1], "You are Coder. writes code") {
		t.Fatalf("system prompt not passed: %q", runs[0])
	}
	if i := slices.Index(runs[1], "--resume"); i < 0 || runs[1][i+1] != "sess-1" || runs[1][1] != "and now?" {
		t.Fatalf("second argv %q: the conversation was not resumed", runs[1])
	}
	// Clearing the session starts the CLI afresh.
	e.agDo("POST", "/v1/sessions/"+sid+"/clear", nil, nil)
	e.agChat(sid, "fresh")
	if runs := argvRuns(t, dir); slices.Contains(runs[2], "--resume") {
		t.Fatalf("third argv %q resumed a cleared conversation", runs[2])
	}
	// Delegating to a CLI agent reports its tool calls and thinking.
	g, _ := e.routeAgent("general")
	ds := agDelegations(t, e.agChat(g.Session.SessionID, `[[tool agents_message {"agentId":"coder","content":"look"}]]`))
	res := delegationResult(t, ds[0])
	if res.Status != "complete" || *res.ToolCallCount != 1 || res.ToolCalls[0].Name != "Bash" || res.ThinkingText != "Look first." || res.Response != "Let me look.\n\nOne file: a.go." {
		t.Fatalf("delegation %+v", res)
	}
	var agents api.AgentList
	e.c.Do(context.Background(), "GET", "/v1/agents", nil, &agents)
	states := map[string]api.AgentStatus{}
	for _, a := range agents.Agents {
		states[a.AgentID] = a.Status
	}
	if states["coder"].State != "ok" || states["codexer"].State != "unconfigured" || !strings.Contains(states["codexer"].Detail, "npm i -g @openai/codex") {
		t.Fatalf("agent statuses %+v", states)
	}
}

func TestCLINotInstalled(t *testing.T) {
	fakeClaude(t) // claude only: codex is missing
	if _, err := os.Stat("/usr/local/bin/codex"); err == nil {
		t.Skip("a real codex is installed")
	}
	e := newEnv(t)
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("codexer")
	evs := e.agChat(r.Session.SessionID, "hello")
	last := evs[len(evs)-1]
	ee := decode[api.ErrorEvent](t, last.Data)
	if last.Type != api.EventError || ee.Code != "cli_not_installed" || !strings.Contains(ee.Message, "codex") || !strings.Contains(ee.Message, "install") {
		t.Fatalf("last event %s %+v", last.Type, ee)
	}
}

func TestCLICancelStopsTheCLI(t *testing.T) {
	dir := fakeClaude(t)
	e := newEnv(t)
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	e.agChat(sid, "first")
	os.WriteFile(filepath.Join(dir, "hang"), nil, 0o644)
	done := make(chan []api.StreamEvent, 1)
	go func() { done <- e.agChat(sid, "take your time") }()
	testwait.Until(t, "the CLI to start", 10*time.Second, func() bool { return len(argvRuns(t, dir)) == 2 })
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if c, err := e.c.Cancel(context.Background(), sid); err != nil || !c.Cancelled {
		t.Fatalf("cancel %v %+v", err, c)
	}
	evs := <-done
	last := evs[len(evs)-1]
	if last.Type != api.EventError || decode[api.ErrorEvent](t, last.Data).Code != "cancelled" {
		t.Fatalf("last %s %s", last.Type, last.Data)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	// The cancelled turn stored no empty answer; the CLI session goes on.
	for _, m := range e.agTranscript(sid) {
		if m.Role == "assistant" && m.Text == "" {
			t.Fatalf("an empty assistant message was stored: %+v", m)
		}
	}
	os.Remove(filepath.Join(dir, "hang"))
	e.agChat(sid, "again")
	runs := argvRuns(t, dir)
	if i := slices.Index(runs[2], "--resume"); i < 0 || runs[2][i+1] != "sess-1" {
		t.Fatalf("after cancel argv %q", runs[2])
	}
}
