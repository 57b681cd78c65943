package chatrt_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
	"jarvis/service/chatrt"
	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// fixture is the chat runtime over a real store and event hub, a scripted
// model server (internal/testpeer) and a recording publisher: no service,
// no HTTP server of ours.
type fixture struct {
	rt     *chatrt.Runtime
	env    turn.Env
	rec    *turntest.Recorder
	waiter *toolwait.Waiter
	cfg    *config.Config

	mu    sync.Mutex
	turns map[string]*turn.Turn
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	model := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(model.Close)
	cfg, err := config.Parse("test.json", []byte(`{"agents":[{"agentId":"general","displayName":"General","type":"chat"}],
		"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":"`+model.URL+`/v1","model":"test-model","contextWindow":32768}},
		"toolResultTimeoutSeconds":30}`))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, t.TempDir(), cfg)
	env.HTTPClient = model.Client()
	f := &fixture{env: env, rec: rec, cfg: cfg, waiter: toolwait.New(env), turns: map[string]*turn.Turn{}}
	f.rt = chatrt.New(env, chatrt.Options{Waiter: f.waiter, Runtimes: &turn.Registry{},
		ProviderFor: func(config.Agent) (llm.Provider, string, error) {
			return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: model.URL + "/v1", HTTPClient: model.Client()}), "test-model", nil
		},
		Running: func(id string) *turn.Turn { f.mu.Lock(); defer f.mu.Unlock(); return f.turns[id] },
	})
	return f
}

func (f *fixture) run(tt *turn.Turn, sess store.Session) turn.Outcome {
	agent, _ := f.cfg.Agent("general")
	return f.rt.Run(context.Background(), tt, sess, agent)
}

// A chat turn streams the model's deltas and ends with the whole reply,
// which the runtime hands back to be stored with the turn's end.
func TestChatTurnStreamsDeltasAndEnds(t *testing.T) {
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "general", "count [[deltas 5]]")
	out := f.run(tt, sess)
	if out.Fail != nil {
		t.Fatalf("turn failed: %+v", out.Fail)
	}
	if out.Final != "w0 w1 w2 w3 w4 " {
		t.Fatalf("final %q", out.Final)
	}
	var published strings.Builder
	for _, ev := range f.rec.Events() {
		if ev.Type != api.EventDelta {
			t.Errorf("unexpected event %s %s", ev.Type, ev.Data)
			continue
		}
		var d api.TextEvent
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.TurnID != tt.ID {
			t.Errorf("delta %s (%v)", ev.Data, err)
		}
		published.WriteString(d.Text)
	}
	// Nobody follows the session: the step's text is one event at its end,
	// or the tail published with the turn's end.
	if got := published.String() + out.Tail; got != out.Final {
		t.Fatalf("deltas %q + tail %q, want the final %q", published.String(), out.Tail, out.Final)
	}
	if out.Last == nil || out.Last.Role != "assistant" || out.Last.Content != out.Final {
		t.Fatalf("last message %+v", out.Last)
	}
	if tt.Usage.Requests != 1 || tt.Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v", tt.Usage)
	}
}

// A model's tool call waits for the desktop's result (posted through the
// waiter, as POST /v1/tools/result does); the model then answers with it.
func TestChatToolCallAwaitsTheDesktopsResult(t *testing.T) {
	f := newFixture(t)
	tt, sess := turntest.Begin(t, f.env, "general", `read it [[tool read_file {"path":"/tmp/notes.txt","reason":"to read your notes"}]]`)
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.run(tt, sess) }()

	var req api.ToolCall
	testwait.Until(t, "a tool.request", 10*time.Second, func() bool {
		data, ok := f.rec.First(api.EventToolRequest)
		return ok && json.Unmarshal(data, &req) == nil
	})
	if req.Name != "read_file" || req.Reason != "to read your notes" || req.TurnID != tt.ID || strings.Contains(string(req.Arguments), "reason") {
		t.Fatalf("tool request %+v", req)
	}
	select {
	case out := <-done:
		t.Fatalf("the turn ended before the result came: %+v", out)
	default:
	}
	if err := f.waiter.Deliver(context.Background(), tt.SessionID, api.ToolResult{ID: req.ID, OK: true, Result: "buy milk"}); err != nil {
		t.Fatal(err)
	}
	// A second result for the same call is refused.
	if err := f.waiter.Deliver(context.Background(), tt.SessionID, api.ToolResult{ID: req.ID, OK: true, Result: "again"}); err == nil {
		t.Fatal("a second result was accepted")
	}
	out := <-done
	if out.Fail != nil || out.Final != "Tool results: buy milk" {
		t.Fatalf("outcome %+v", out)
	}
	if got := tt.Taint.List(); len(got) != 1 || got[0] != (api.Source{Kind: "tool", Name: "read_file"}) {
		t.Fatalf("a result the desktop did not vouch for is in the model's context: taint %+v, want the result of read_file", got)
	}
	var res api.ToolResult
	if data, ok := f.rec.First(api.EventToolResult); !ok || json.Unmarshal(data, &res) != nil {
		t.Fatalf("no tool.result event: %s", data)
	}
	if res.ID != req.ID || !res.OK || res.Source != "desktop" {
		t.Fatalf("tool result event %+v", res)
	}
	msgs, err := f.env.Store.Messages(context.Background(), tt.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user assistant tool" {
		t.Fatalf("stored messages %q (the final answer is stored with the turn's end)", got)
	}
}

// A tool the agent may not use is refused without asking the desktop.
func TestChatUnknownToolIsRefusedWithoutAsking(t *testing.T) {
	f := newFixture(t)
	out := f.run(turntest.Begin(t, f.env, "general", `[[tool no_such_tool {}]]`))
	if out.Fail != nil || !strings.Contains(out.Final, `Tool call not completed: unknown tool "no_such_tool"`) {
		t.Fatalf("outcome %+v", out)
	}
	if data, asked := f.rec.First(api.EventToolRequest); asked {
		t.Fatalf("the desktop was asked: %s", data)
	}
}
