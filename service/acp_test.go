package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"jarvis/internal/testwait"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/api"
)

// scriptedACPAgent builds service/acpagent's scripted ACP agent.
func scriptedACPAgent(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	bin := filepath.Join(t.TempDir(), "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "./acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	return bin
}

// An ACP agent's permission requests are tool requests any client of the
// service answers over HTTP: allowed, denied, or unanswered (the
// tool-result timeout denies, fail closed).
func TestACPPermissionOverHTTP(t *testing.T) {
	bin := scriptedACPAgent(t)
	e := newEnv(t)
	e.setAgents(fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q}}]`, bin), `,"toolResultTimeoutSeconds":1`)
	var agents api.AgentList
	e.c.Do(context.Background(), "GET", "/v1/agents", nil, &agents)
	for _, a := range agents.Agents {
		if a.AgentID == "coder" && a.Status.State != "ok" {
			t.Errorf("acp agent status %+v", a.Status)
		}
	}
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	// The agent keeps its conversation: the service does not compact it.
	var se *api.StatusError
	if err := e.c.Do(context.Background(), "POST", "/v1/sessions/"+sid+"/compact", nil, nil); !errors.As(err, &se) || se.Status != 409 || se.Err.Code != "compaction_unsupported" {
		t.Errorf("compact: %v", err)
	}
	turn := func(text string, answer func(api.ToolCall) (api.ToolResult, bool)) ([]api.StreamEvent, []api.ToolCall) {
		return acpTurn(t, e, sid, text, answer)
	}
	for _, tt := range []struct {
		name   string
		answer func(api.ToolCall) (api.ToolResult, bool)
		want   string
	}{
		{"allowed", func(api.ToolCall) (api.ToolResult, bool) { return api.ToolResult{OK: true, Result: "approved"}, true }, "selected once"},
		{"denied", func(api.ToolCall) (api.ToolResult, bool) {
			return api.ToolResult{OK: false, Error: ptr("denied by the user")}, true
		}, "selected no"},
		{"timeout", func(api.ToolCall) (api.ToolResult, bool) { return api.ToolResult{}, false }, "selected no"},
	} {
		evs, reqs := turn("perm", tt.answer)
		if f := text(evs, api.EventFinal); f != tt.want {
			t.Errorf("%s: final %q, want %q (%v)", tt.name, f, tt.want, types(evs))
		}
		if len(reqs) != 1 || reqs[0].Name != "agent_permission" || reqs[0].Source != "service" || reqs[0].Risk != "risky" ||
			!strings.Contains(string(reqs[0].Arguments), `"title":"Run rm -rf build"`) {
			t.Errorf("%s: tool requests %+v", tt.name, reqs)
		}
	}
	evs, _ := turn("stream", func(api.ToolCall) (api.ToolResult, bool) { return api.ToolResult{}, false })
	if d, f := text(evs, api.EventDelta), text(evs, api.EventFinal); d != "Hello, world." || f != d {
		t.Errorf("stream: deltas %q final %q", d, f)
	}
	var kinds []string
	for _, ev := range evs {
		if ev.Type == api.EventStatus {
			st := decode[api.StatusEvent](t, ev.Data)
			kinds = append(kinds, st.Kind)
			if st.Kind == "plan" && fmt.Sprint(st.Plan) != "[{look in_progress high} {fix pending low}]" {
				t.Errorf("plan steps %+v", st.Plan)
			}
		}
	}
	if strings.Join(kinds, ",") != "plan,tool,tool" {
		t.Errorf("status kinds %q", kinds)
	}
}

func ptr(s string) *string { return &s }

// acpTurn sends text and answers each tool request with answer (no answer
// when it says false); it returns the turn's events and tool requests.
func acpTurn(t *testing.T, e *env, sid, text string, answer func(api.ToolCall) (api.ToolResult, bool)) ([]api.StreamEvent, []api.ToolCall) {
	t.Helper()
	var got collect
	var reqs []api.ToolCall
	err := e.c.ChatStream(context.Background(), sid, text, func(ev api.StreamEvent) error {
		got.add(ev)
		if ev.Type == api.EventToolRequest {
			tc := decode[api.ToolCall](t, ev.Data)
			reqs = append(reqs, tc)
			if res, ok := answer(tc); ok {
				res.ID = tc.ID
				if err := e.c.PostToolResult(context.Background(), sid, res); err != nil {
					t.Errorf("post: %v", err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got.all(), reqs
}

// Failures end the turn with documented codes; a cancel ends everything
// the agent started.
func TestACPFailuresAndCancel(t *testing.T) {
	bin := scriptedACPAgent(t)
	dir := t.TempDir()
	e := newEnv(t)
	e.setAgents(fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_DIR":%q}}},
 {"agentId":"locked","displayName":"Locked","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_AUTH":"1"}}}]`, bin, dir, bin), "")
	lastErr := func(evs []api.StreamEvent) api.ErrorEvent {
		last := evs[len(evs)-1]
		if last.Type != api.EventError {
			t.Fatalf("last event %s %s", last.Type, last.Data)
		}
		return decode[api.ErrorEvent](t, last.Data)
	}
	l, _ := e.routeAgent("locked")
	if ee := lastErr(e.agChat(l.Session.SessionID, "hi")); ee.Code != "acp_auth_required" || !strings.Contains(ee.Message, "claude /login") {
		t.Errorf("auth: %+v", ee)
	}
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	if ee := lastErr(e.agChat(sid, "crash")); ee.Code != "acp_exited" || !strings.Contains(ee.Message, "panic: scripted crash") {
		t.Errorf("crash: %+v", ee)
	}
	if ee := lastErr(e.agChat(sid, "malformed")); ee.Code != "acp_protocol" {
		t.Errorf("malformed: %+v", ee)
	}
	done := make(chan []api.StreamEvent, 1)
	go func() { done <- e.agChat(sid, "child") }()
	testwait.Until(t, "the agent's child to start", 10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "child")); return err == nil })
	if c, err := e.c.Cancel(context.Background(), sid); err != nil || !c.Cancelled {
		t.Fatalf("cancel %v %+v", err, c)
	}
	if ee := lastErr(<-done); ee.Code != "cancelled" {
		t.Errorf("cancel: %+v", ee)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "child"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the agent's child %d survived the cancel", pid)
	}
	if f := text(e.agChat(sid, "echo again"), api.EventFinal); f != "echo: echo again" {
		t.Errorf("after the cancel: %q", f)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}

// An ACP agent's terminal is a run_command tool request any client of the
// service answers: the command's output goes back to the agent; a denial
// fails the terminal's creation.
func TestACPTerminalOverHTTP(t *testing.T) {
	bin := scriptedACPAgent(t)
	e := newEnv(t)
	e.setAgents(fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q}}]`, bin), "")
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	for _, tt := range []struct {
		name   string
		answer api.ToolResult
		want   string
	}{
		{"allowed", api.ToolResult{OK: true, Result: `{"exit_code":0,"stdout":"hi\n","stderr":"warn\n","truncated":true}`}, `exit=0 truncated=true released=true output="hi\nwarn\n"`},
		{"denied", api.ToolResult{OK: false, Error: ptr("denied by the user")}, `terminal failed: {"code":-32603,"message":"Internal error","data":{"error":"denied by the user"}}`},
	} {
		evs, reqs := acpTurn(t, e, sid, "term echo hi", func(api.ToolCall) (api.ToolResult, bool) { return tt.answer, true })
		if f := text(evs, api.EventFinal); f != tt.want {
			t.Errorf("%s: final %q, want %q", tt.name, f, tt.want)
		}
		if len(reqs) != 1 || reqs[0].Name != "run_command" || reqs[0].Risk != "risky" ||
			!strings.Contains(string(reqs[0].Arguments), `"program":"echo","args":["hi"],"cwd":"/`) {
			t.Errorf("%s: tool requests %+v", tt.name, reqs)
		}
	}
}

// The agent's instructions open each new ACP session's first prompt; a
// session that replaces one (the agent crashed and cannot resume, or the
// instructions changed) also gets a summary of the conversation, and the
// user is told with a status line.
func TestACPInstructionsAndSummary(t *testing.T) {
	bin := scriptedACPAgent(t)
	e := newEnv(t)
	agents := func(prompt string) string {
		return fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","systemPrompt":%q,"chat":{"provider":"acp","command":%q}}]`, prompt, bin)
	}
	e.setAgents(agents("Answer in French."), "")
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	notes := func(evs []api.StreamEvent) []string {
		var out []string
		for _, ev := range evs {
			if ev.Type == api.EventStatus {
				if st := decode[api.StatusEvent](t, ev.Data); st.Kind == "agent_status" {
					out = append(out, st.Text)
				}
			}
		}
		return out
	}
	evs := e.agChat(sid, "preamble")
	if f := text(evs, api.EventFinal); !strings.Contains(f, "<jarvis-instructions>") || !strings.Contains(f, "Answer in French.") || strings.Contains(f, "<conversation-summary>") || len(notes(evs)) != 0 {
		t.Fatalf("first turn: %q %q", f, notes(evs))
	}
	if f := text(e.agChat(sid, "hello there"), api.EventFinal); f != "echo: hello there" {
		t.Fatalf("second turn: %q", f)
	}
	e.agChat(sid, "crash")
	summary := "User: hello there\nYou: echo: hello there\nUser: crash\nYou: partial\n" // the crash's partial answer is kept
	evs = e.agChat(sid, "preamble")
	if f := text(evs, api.EventFinal); !strings.Contains(f, "Answer in French.") || !strings.Contains(f, summary) {
		t.Errorf("after the crash: %q", f)
	}
	if n := notes(evs); len(n) != 1 || !strings.Contains(n[0], "could not resume its conversation") || !strings.Contains(n[0], "summary of the last") {
		t.Errorf("after the crash, status lines %q", n)
	}
	e.setAgents(agents("Answer in German."), "")
	evs = e.agChat(sid, "preamble")
	if f := text(evs, api.EventFinal); !strings.Contains(f, "\nAnswer in German.\n</jarvis-instructions>") || !strings.Contains(f, summary) {
		t.Errorf("changed instructions: %q", f)
	}
	if n := notes(evs); len(n) != 1 || !strings.Contains(n[0], "instructions changed") {
		t.Errorf("changed instructions, status lines %q", n)
	}
	if f := text(e.agChat(sid, "preamble"), api.EventFinal); f != "preamble:\n" {
		t.Errorf("the same session again: %q", f)
	}
}

// Deleting or clearing a session stops its idle ACP agent and everything in
// its process group: no process of the agent is left.
func TestACPSessionDeletedOrClearedStopsTheAgent(t *testing.T) {
	bin := scriptedACPAgent(t)
	dir := t.TempDir()
	e := newEnv(t)
	e.setAgents(fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_DIR":%q}}}]`, bin, dir), "")
	// running counts the agent's processes and its background sleep.
	running := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, ent := range ents {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || zombie(pid) {
				continue
			}
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == bin {
				n++
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "bg")); err == nil {
			if pid, _ := strconv.Atoi(string(b)); pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) {
				n++
			}
		}
		return n
	}
	for _, how := range []string{"delete", "clear"} {
		r, _ := e.routeAgent("coder") // after the delete, a new session
		s := r.Session
		if f := text(e.agChat(s.SessionID, "bg"), api.EventFinal); !strings.HasPrefix(f, "pid=") {
			t.Fatalf("%s: bg: %q", how, f)
		}
		if n := running(); n != 2 {
			t.Fatalf("%s: %d processes running, want the agent and its sleep", how, n)
		}
		var err error
		if how == "delete" {
			err = e.c.Do(context.Background(), "DELETE", "/v1/sessions/"+s.SessionID, nil, nil)
		} else {
			err = e.c.Do(context.Background(), "POST", "/v1/sessions/"+s.SessionID+"/clear", nil, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "the agent and its sleep to end after the "+how, 15*time.Second, func() bool { return running() == 0 })
		os.Remove(filepath.Join(dir, "bg"))
		if how == "clear" { // the cleared session talks to a new agent
			if f := text(e.agChat(s.SessionID, "preamble"), api.EventFinal); strings.Contains(f, "<conversation-summary>") || !strings.Contains(f, "<jarvis-instructions>") {
				t.Errorf("after the clear: %q", f)
			}
		}
	}
}

// keptLines are the status lines of a transcript whose meta kind is
// "diff" or "agent_choice", as "kind by/undo: text".
func keptLines(t *testing.T, e *env, sid string) ([]string, []api.TranscriptMessage) {
	t.Helper()
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range tr.Messages {
		if m.Role != "status" {
			continue
		}
		var meta struct {
			Kind  string
			By    string
			Mode  string
			Model string
			Diff  *api.FileDiff
		}
		_ = json.Unmarshal(m.Meta, &meta)
		switch meta.Kind {
		case "agent_choice":
			out = append(out, fmt.Sprintf("choice %s %s/%s: %s", meta.By, meta.Mode, meta.Model, m.Text))
		case "diff":
			if meta.Diff == nil {
				t.Fatalf("a kept diff line without its diff: %s", m.Meta)
			}
			old := "<new>"
			if meta.Diff.Old != nil {
				old = *meta.Diff.Old
			}
			out = append(out, fmt.Sprintf("diff %s %s %s->%s", meta.Diff.Undo, filepath.Base(meta.Diff.Path), old, meta.Diff.New))
		}
	}
	return out, tr.Messages
}

// Diff cards and changes of mode or model are kept with the conversation:
// after the service restarts, the transcript still has each ACP diff card
// (with whether the turn's undo restores the file) and a line for each
// change of mode or model, the user's (the picker) and the agent's own
// (current_mode_update), each in its place; the first choices a new agent
// process reports after the restart are not a change.
func TestACPDiffCardsAndChoicesSurviveARestart(t *testing.T) {
	bin := scriptedACPAgent(t)
	e := newEnv(t)
	e.setAgents(fmt.Sprintf(`[{"agentId":"general","displayName":"General"},
 {"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_MODES":"1"}}}]`, bin), `,"toolResultTimeoutSeconds":30`)
	r, _ := e.routeAgent("coder")
	sid := r.Session.SessionID
	work := filepath.Join(e.dir, "acp", "coder")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	choose := func(body string) {
		t.Helper()
		var got api.AgentChoices
		if err := e.c.Do(ctx, "PUT", "/v1/sessions/"+sid+"/agent-choice", json.RawMessage(body), &got); err != nil {
			t.Fatal(err)
		}
	}
	allow := func(api.ToolCall) (api.ToolResult, bool) { return api.ToolResult{OK: true, Result: "written"}, true }
	var liveChanges []string // the agent_choice statuses the turns' streams carried
	final := func(msg string) string {
		t.Helper()
		evs, _ := acpTurn(t, e, sid, msg, allow)
		for _, ev := range evs {
			if ev.Type != api.EventStatus {
				continue
			}
			if st := decode[api.StatusEvent](t, ev.Data); st.Kind == "agent_choice" {
				liveChanges = append(liveChanges, st.Text)
			}
		}
		return msg + " -> " + text(evs, api.EventFinal)
	}

	choose(`{"mode":"plan"}`) // before the agent runs: kept for its session
	for _, got := range []string{
		final("edit " + filepath.Join(work, "a.txt") + " after"),
		final("selfedit " + filepath.Join(work, "b.txt") + " new file"),
		final("leaveplan"),
	} {
		if strings.HasSuffix(got, "-> ") {
			t.Fatalf("a turn did not answer: %s", got)
		}
	}
	choose(`{"model":"large"}`) // while it runs: sent at once
	choose(`{"model":"large"}`) // the same again: no change, no line
	want := []string{
		"choice user plan/: Coder: mode changed to plan by you",
		"diff turn a.txt before->after",
		"diff none b.txt <new>->new file",
		"choice agent code/small: Coder: mode changed to Code by the agent",
		"choice user code/large: Coder: model changed to Large by you",
	}
	if len(liveChanges) != 1 || liveChanges[0] != "Coder: mode changed to Code by the agent" {
		t.Errorf("the window saw the agent's change as %q", liveChanges)
	}
	live, _ := keptLines(t, e, sid)
	if strings.Join(live, "\n") != strings.Join(want, "\n") {
		t.Fatalf("kept lines before the restart:\n%s\nwant:\n%s", strings.Join(live, "\n"), strings.Join(want, "\n"))
	}

	e.stop()
	e.start()
	if got := final("mode"); got != "mode -> mode=code model=large" {
		t.Fatalf("after the restart: %s", got)
	}
	after, msgs := keptLines(t, e, sid)
	if strings.Join(after, "\n") != strings.Join(want, "\n") {
		t.Fatalf("kept lines after the restart:\n%s\nwant:\n%s", strings.Join(after, "\n"), strings.Join(want, "\n"))
	}
	// Each diff card is in its turn, before the turn's reply.
	var order []string
	for _, m := range msgs {
		if m.Role == "status" && strings.Contains(string(m.Meta), `"kind":"diff"`) || m.Role == "assistant" && strings.HasPrefix(m.Text, "edited ") {
			order = append(order, m.Role)
		}
	}
	if strings.Join(order, ",") != "status,assistant,status,assistant" {
		t.Fatalf("diff cards and replies in the transcript: %v", order)
	}
}
