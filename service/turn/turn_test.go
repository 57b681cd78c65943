package turn_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// named is a runtime that says who it is.
type named string

func (n named) Run(context.Context, *turn.Turn, store.Session, config.Agent) turn.Outcome {
	return turn.Outcome{Final: string(n)}
}
func (n named) Status(config.Agent) api.AgentStatus { return api.AgentStatus{State: string(n)} }
func (n named) Validate(config.Agent) error         { return nil }

func TestRegistryPicksTheRuntimeOfEachAgent(t *testing.T) {
	c, err := config.Parse("test.json", []byte(`{"agents":[
		{"agentId":"general"},
		{"agentId":"coder","chat":{"provider":"claude-cli"}},
		{"agentId":"px","type":"proxy","proxy":{"url":"http://127.0.0.1:9/x"}},
		{"agentId":"ext","type":"external","external":{"inputUrl":"http://127.0.0.1:9/in"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var r turn.Registry
	r.Register(config.TypeChat, named("chat"))
	r.Register(turn.KindCLI, named("cli"))
	r.Register(config.TypeProxy, named("proxy"))
	for id, want := range map[string]string{"general": "chat", "coder": "cli", "px": "proxy"} {
		a, _ := c.Agent(id)
		rt, ok := r.For(c, a)
		if !ok || rt.Run(context.Background(), &turn.Turn{}, store.Session{}, a).Final != want {
			t.Fatalf("%s: runtime %v %v, want %s", id, rt, ok, want)
		}
	}
	// A type nobody registered has no runtime: the service says so.
	if a, _ := c.Agent("ext"); turn.KindOf(c, a) != config.TypeExternal {
		t.Fatalf("kind of an external agent: %q", turn.KindOf(c, a))
	} else if rt, ok := r.For(c, a); ok {
		t.Fatalf("unregistered type answered by %v", rt)
	}
}

func TestFailedAndStats(t *testing.T) {
	out := turn.Failed("cli_failed", "exit %d", 2)
	if out.Fail == nil || out.Fail.Code != "cli_failed" || out.Fail.Message != "exit 2" || out.Final != "" {
		t.Fatalf("failed outcome %+v", out)
	}
	var tt turn.Turn
	var wg sync.WaitGroup
	for range 8 { // runtimes report from their own goroutines
		wg.Add(1)
		go func() {
			defer wg.Done()
			tt.Stats.AddTool("Bash", 1500*time.Microsecond)
			tt.Stats.AddThinking("x")
		}()
	}
	wg.Wait()
	calls, thinking := tt.Stats.Snapshot()
	if tt.Stats.ToolCalls() != 8 || len(calls) != 8 || calls[0].Name != "Bash" || calls[0].DurationMs != 1 || thinking != "xxxxxxxx" {
		t.Fatalf("stats %d %+v %q", tt.Stats.ToolCalls(), calls, thinking)
	}
	if tt.Delegators() != nil {
		t.Fatal("a user's turn has no delegators")
	}
	tt.Chain = []string{"general", "notes"}
	if d := tt.Delegators(); len(d) != 1 || d[0] != "general" {
		t.Fatalf("delegators %v", d)
	}
}
