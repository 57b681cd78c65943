package service_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"jarvis/api"
)

// Every tool a CLI agent ran inside its own program is on the stream as a
// tool.result with source "agent" (name and arguments), for the desktop's
// audit log.
func TestCLIAgentToolsReportedForTheAudit(t *testing.T) {
	fakeClaude(t)
	e := newEnv(t)
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("coder")
	var got []api.ToolResult
	for _, ev := range e.agChat(r.Session.SessionID, "list files") {
		if ev.Type == api.EventToolResult {
			got = append(got, decode[api.ToolResult](t, ev.Data))
		}
	}
	if len(got) != 1 {
		t.Fatalf("tool.result events %+v, want one", got)
	}
	if g := got[0]; g.Source != "agent" || g.Name != "Bash" || string(g.Arguments) != `{"command":"ls"}` || !g.OK || g.ID == "" || !strings.Contains(g.Result, "not gated") {
		t.Fatalf("tool.result %+v", g)
	}
}

// A changed system prompt starts a new CLI session: a resumed claude would
// keep the old one.
func TestCLIInstructionsChangeStartsNewSession(t *testing.T) {
	dir := fakeClaude(t)
	e := newEnv(t)
	e.setAgents(cliAgents, "")
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	e.agChat(sid, "one")
	e.agChat(sid, "two")
	e.setAgents(strings.Replace(cliAgents, `"description":"writes code",`, `"description":"writes code","systemPrompt":"Answer in French.",`, 1), "")
	evs := e.agChat(sid, "three")
	runs := argvRuns(t, dir)
	if len(runs) != 3 || !slices.Contains(runs[1], "--resume") || slices.Contains(runs[2], "--resume") {
		t.Fatalf("runs %q: the second should resume, the third start anew", runs)
	}
	said := false
	for _, ev := range evs {
		if ev.Type == api.EventStatus && strings.Contains(decode[api.StatusEvent](t, ev.Data).Text, "instructions changed") {
			said = true
		}
	}
	if !said {
		t.Fatalf("no status said why a new CLI conversation started: %v", types(evs))
	}
}

// A CLI failure is an error event with a documented code, and its text is
// never stored as the agent's answer.
func TestCLIErrorsAreErrorEvents(t *testing.T) {
	tests := []struct {
		name, out, code string
	}{
		{"auth", `{"type":"system","subtype":"init","session_id":"s"}
{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Invalid API key · Please run /login"}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","session_id":"s"}
`, "cli_auth"},
		{"empty reply", `{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s"}
`, "cli_empty_reply"},
		{"failure", `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s","errors":["tool crashed"]}
`, "cli_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fakeClaude(t)
			os.WriteFile(filepath.Join(dir, "out.jsonl"), []byte(tt.out), 0o644)
			e := newEnv(t)
			e.setAgents(cliAgents, "")
			r, _ := e.routeAgent("coder")
			evs := e.agChat(r.Session.SessionID, "hi")
			last := evs[len(evs)-1]
			if ee := decode[api.ErrorEvent](t, last.Data); last.Type != api.EventError || ee.Code != tt.code {
				t.Fatalf("last event %s %s, want error %s", last.Type, last.Data, tt.code)
			}
			if d := text(evs, api.EventDelta); d != "" {
				t.Errorf("deltas %q", d)
			}
			for _, m := range e.agTranscript(r.Session.SessionID) {
				if m.Role == "assistant" {
					t.Errorf("an assistant message was stored: %+v", m)
				}
			}
		})
	}
}
