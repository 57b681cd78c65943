package acprt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
	"jarvis/service/acprt"
	"jarvis/service/config"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// fixture is the ACP runtime driving service/acpagent's scripted agent (a
// real subprocess speaking the Agent Client Protocol) over a real store,
// publishing to a recorder: no service, no HTTP server.
type fixture struct {
	rt     *acprt.Runtime
	env    turn.Env
	rec    *turntest.Recorder
	waiter *toolwait.Waiter
	cfg    *config.Config
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q}},
		{"agentId":"missing","displayName":"Missing","chat":{"provider":"acp","command":"no-such-acp-agent-here"}}],"toolResultTimeoutSeconds":30}`, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	f := &fixture{env: env, rec: rec, cfg: cfg, waiter: toolwait.New(env)}
	f.rt = acprt.New(env, acprt.Options{Waiter: f.waiter,
		Instructions:    func(*config.Config, config.Agent) string { return "Be brief." },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(f.rt.Close)
	return f
}

func (f *fixture) run(tt *turn.Turn, sess store.Session) turn.Outcome {
	agent, _ := f.cfg.Agent("coder")
	return f.rt.Run(context.Background(), tt, sess, agent)
}

func TestACPStatusSaysWhichCommandIsMissing(t *testing.T) {
	f := newFixture(t)
	coder, _ := f.cfg.Agent("coder")
	missing, _ := f.cfg.Agent("missing")
	if st := f.rt.Status(coder); st.State != "ok" {
		t.Fatalf("status of a found command %+v", st)
	}
	if err := f.rt.Validate(missing); err == nil || !strings.Contains(err.Error(), "no-such-acp-agent-here") {
		t.Fatalf("validate of a missing command: %v", err)
	}
}

// The agent's stream becomes deltas, a plan and tool status lines; its
// permission request is a tool.request that waits for the desktop's answer.
func TestACPTurnStreamsAndAsksPermission(t *testing.T) {
	f := newFixture(t)
	out := f.run(turntest.Begin(t, f.env, "coder", "stream"))
	if out.Fail != nil || out.Final != "Hello, world." || out.Last == nil || !strings.Contains(out.Last.Meta, `"stopReason":"end_turn"`) {
		t.Fatalf("outcome %+v (last %+v)", out, out.Last)
	}
	lines := strings.Join(f.rec.Lines("kind"), "\n")
	for _, want := range []string{"assistant.delta", "status plan", "status tool"} {
		if !strings.Contains(lines, want) {
			t.Errorf("no %q among the events:\n%s", want, lines)
		}
	}

	tt, sess := turntest.Begin(t, f.env, "coder", "perm")
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.run(tt, sess) }()
	var req api.ToolCall
	testwait.Until(t, "the permission request", 20*time.Second, func() bool {
		data, ok := f.rec.First(api.EventToolRequest)
		return ok && json.Unmarshal(data, &req) == nil
	})
	if req.Name != "agent_permission" || req.Source != "service" || req.Risk != "risky" || !strings.Contains(string(req.Arguments), `"title":"Run rm -rf build"`) {
		t.Fatalf("permission request %+v", req)
	}
	if err := f.waiter.Deliver(context.Background(), sess.ID, api.ToolResult{ID: req.ID, OK: true, Result: "approved"}); err != nil {
		t.Fatal(err)
	}
	if o := <-done; o.Fail != nil || o.Final != "selected once" {
		t.Fatalf("outcome after the permission %+v", o)
	}
}

// answer waits for the turn's next tool.request named name and delivers ok.
func (f *fixture) answer(t *testing.T, sessID, name string, ok bool, result string) api.ToolCall {
	t.Helper()
	var req api.ToolCall
	testwait.Until(t, "a "+name+" request", 20*time.Second, func() bool {
		for _, ev := range f.rec.Events() {
			if ev.Type == api.EventToolRequest && json.Unmarshal(ev.Data, &req) == nil && req.Name == name {
				return true
			}
		}
		return false
	})
	r := api.ToolResult{ID: req.ID, OK: ok, Result: result}
	if !ok {
		msg := "the user denied it"
		r.Error = &msg
	}
	if err := f.waiter.Deliver(context.Background(), sessID, r); err != nil {
		t.Fatal(err)
	}
	return req
}

// A permission denied at the desktop's gate ends the turn as an answer that
// says so, not as acp_failed; the agent was told and went on.
func TestACPDeniedPermissionIsNotAFailure(t *testing.T) {
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "coder", "abort")
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.run(tt, sess) }()
	f.answer(t, sess.ID, "agent_permission", false, "")
	o := <-done
	if o.Fail != nil {
		t.Fatalf("a denied permission failed the turn: %+v", o.Fail)
	}
	if !strings.Contains(o.Final, "echo: The user denied permission for: Run make clean") {
		t.Fatalf("final %q", o.Final)
	}
	said := false
	for _, ev := range f.rec.Events() {
		var st api.StatusEvent
		if ev.Type == api.EventStatus && json.Unmarshal(ev.Data, &st) == nil && strings.Contains(st.Text, "you denied Run make clean") {
			said = true
		}
	}
	if !said {
		t.Fatalf("no status line said the user denied it:\n%s", strings.Join(f.rec.Lines("kind"), "\n"))
	}
}

// The commands the agent ran itself are tool.result events with source
// "agent" (the desktop audits them as "ran inside the agent, not gated")
// and a status card each; the one it ran through Jarvis's terminal went to
// the desktop as run_command instead.
func TestACPAgentsOwnCommandsForTheAudit(t *testing.T) {
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "coder", "exec")
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.run(tt, sess) }()
	f.answer(t, sess.ID, "run_command", true, `{"stdout":"hi\n","exitCode":0}`)
	if o := <-done; o.Fail != nil || o.Final != "ran" {
		t.Fatalf("outcome %+v", o)
	}
	var got []api.ToolResult
	for _, ev := range f.rec.Events() {
		var r api.ToolResult
		if ev.Type == api.EventToolResult && json.Unmarshal(ev.Data, &r) == nil && r.Source != "desktop" {
			got = append(got, r)
		}
	}
	if len(got) != 2 {
		t.Fatalf("tool.result events %+v, want the agent's two own commands", got)
	}
	if g := got[0]; g.Source != "agent" || g.Name != "ls -la" || string(g.Arguments) != `{"command":["ls","-la"],"cwd":"/work"}` || !g.OK || !strings.Contains(g.Result, "not gated") || g.TurnID != tt.ID {
		t.Errorf("first %+v", g)
	}
	if g := got[1]; g.Source != "agent" || g.OK || g.Error == nil || g.ID == got[0].ID {
		t.Errorf("second %+v", g)
	}
}

// Images attached to the message reach an agent that takes them.
func TestACPImagesReachTheAgent(t *testing.T) {
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "coder", "images")
	tt.User.Meta = `{"images":["data:image/png;base64,iVBORw0KGgo="]}`
	o := f.run(tt, sess)
	// The scripted agent takes no images unless SCRIPTED_IMAGES=1: the
	// turn says so before it is sent.
	if o.Fail != nil || o.Final != "images: " {
		t.Fatalf("outcome %+v", o)
	}
	data, ok := f.rec.First(api.EventStatus)
	if !ok || !strings.Contains(string(data), "does not take images") {
		t.Fatalf("first status %s", data)
	}
}

// After a restart of the service (a new runtime over the same store) the
// next turn resumes the agent's ACP session with session/load, instead of
// starting a new one with a summary.
func TestACPSessionLoadedAfterServiceRestart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_LOAD":"1"}}}],"toolResultTimeoutSeconds":30}`, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	opts := acprt.Options{Waiter: toolwait.New(env),
		Instructions:    func(*config.Config, config.Agent) string { return "Be brief." },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }}
	agent, _ := cfg.Agent("coder")
	first := acprt.New(env, opts)
	tt, sess := turntest.Begin(t, env, "coder", "whoami")
	out := first.Run(context.Background(), tt, sess, agent)
	if out.Fail != nil || out.Last == nil {
		t.Fatalf("first turn %+v", out)
	}
	if _, err := env.Store.AddMessage(context.Background(), *out.Last); err != nil { // as the service stores a turn's end
		t.Fatal(err)
	}
	_, acpSession, _ := strings.Cut(out.Final, "session=")
	first.Close() // the service stops: its agents end

	second := acprt.New(env, opts)
	t.Cleanup(second.Close)
	tt2 := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: tt.User}
	again := second.Run(context.Background(), tt2, sess, agent)
	if again.Fail != nil || !strings.HasSuffix(again.Final, "session="+acpSession) {
		t.Fatalf("after the restart %q (fail %+v), want the ACP session %s resumed", again.Final, again.Fail, acpSession)
	}
	for _, ev := range rec.Events() {
		if ev.Type == api.EventStatus && strings.Contains(string(ev.Data), "new one") {
			t.Fatalf("a status said a new conversation started: %s", ev.Data)
		}
	}
}

// commandsEvents are the agent.commands events recorded so far.
func (f *fixture) commandsEvents(t *testing.T) []api.AgentCommandsEvent {
	t.Helper()
	var out []api.AgentCommandsEvent
	for _, ev := range f.rec.Events() {
		if ev.Type != api.EventAgentCommands {
			continue
		}
		var c api.AgentCommandsEvent
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestACPSlashCommands: the agent's available_commands_update (sent with
// session/new, before the turn began) is published as agent.commands with
// the whole list; "/review the diff" reaches the agent as the prompt's
// first block, before Jarvis's instructions; a new list during a later
// turn is published again, an unchanged one is not.
func TestACPSlashCommands(t *testing.T) {
	t.Setenv("SCRIPTED_COMMANDS", "1")
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "coder", "/review the diff")
	if o := f.run(tt, sess); o.Fail != nil || o.Final != "ran /review with input: the diff (first block: yes, before 1 more)" {
		t.Fatalf("outcome %+v", o)
	}
	evs := f.commandsEvents(t)
	want := []api.AgentCommand{{Name: "review", Description: "Review the changes", Hint: "what to review"}, {Name: "init", Description: "Write AGENTS.md"}}
	if len(evs) != 1 || !reflect.DeepEqual(evs[0].Commands, want) || evs[0].TurnID != tt.ID {
		t.Fatalf("agent.commands events %+v", evs)
	}

	again := func(text string) turn.Outcome {
		next := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: store.Message{SessionID: sess.ID, Role: "user", Content: text},
			Stored: func() (int64, error) { return 0, nil }}
		return f.run(next, sess)
	}
	if o := again("whoami"); o.Fail != nil {
		t.Fatalf("second turn %+v", o)
	}
	if n := len(f.commandsEvents(t)); n != 1 {
		t.Fatalf("an unchanged list was published again: %d events", n)
	}
	if o := again("morecommands"); o.Fail != nil || o.Final != "three commands now" {
		t.Fatalf("third turn %+v", o)
	}
	evs = f.commandsEvents(t)
	if len(evs) != 2 || len(evs[1].Commands) != 3 || evs[1].Commands[2].Name != "compact" {
		t.Fatalf("the new list: %+v", evs)
	}
	// In a session whose ACP session is not new, a command is the only block.
	if o := again("/init"); o.Fail != nil || o.Final != "ran /init with input:  (first block: yes)" {
		t.Fatalf("/init %+v", o)
	}
}
