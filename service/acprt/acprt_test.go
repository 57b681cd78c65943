package acprt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
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
