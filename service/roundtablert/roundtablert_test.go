package roundtablert_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
	"jarvis/service/config"
	"jarvis/service/events"
	"jarvis/service/roundtable/roundtabletest"
	"jarvis/service/roundtablert"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// expert is a scripted round-table agent (the agent protocol's /analyze,
// /challenge and /vote) on a real HTTP server; slow holds every call until
// the caller gives up.
type expert struct {
	name string
	slow bool
	done chan struct{} // closed when the test ends: a slow call returns

	mu    sync.Mutex
	calls int
}

func (a *expert) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	if a.slow {
		select {
		case <-r.Context().Done():
		case <-a.done:
		}
		return
	}
	if !roundtabletest.Answer(w, r.URL.Path, a.name) {
		http.NotFound(w, r)
	}
}

func (a *expert) called() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

type fixture struct {
	rt  *roundtablert.Runtime
	st  *store.Store
	rec *turntest.Recorder
	cfg *config.Config
}

// newFixture is the runtime over a real store and event hub, publishing to a
// recorder; no service and no HTTP server of ours.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	cfg, err := config.Parse("test.json", []byte(`{"agents":[
		{"agentId":"general","displayName":"General","type":"chat"},
		{"agentId":"panel","displayName":"Panel","type":"roundtable","roundtable":{"constraints":["keep it short"]}},
		{"agentId":"broken","displayName":"Broken","type":"roundtable","roundtable":{"timeoutSeconds":-1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := events.New(st, events.Options{})
	t.Cleanup(func() { hub.Close(); st.Close() })
	rec := &turntest.Recorder{}
	env := turn.Env{Store: st, Publisher: rec, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler), Now: time.Now, Events: hub}
	rt := roundtablert.New(context.Background(), env, roundtablert.Options{})
	t.Cleanup(rt.Close)
	return &fixture{rt: rt, st: st, rec: rec, cfg: cfg}
}

// addExpert registers a on a real HTTP server, straight in the store.
func (f *fixture) addExpert(t *testing.T, a *expert) {
	t.Helper()
	a.done = make(chan struct{})
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(a.done) }) // runs before srv.Close
	if _, err := f.st.CreateRoundtableAgent(context.Background(), store.RoundtableAgent{Name: a.name, Domain: "security", BaseURL: srv.URL,
		Capabilities: `["sql"]`, Mode: "standard", TimeoutSeconds: 5}); err != nil {
		t.Fatal(err)
	}
}

func TestStatusSaysWhatIsMissing(t *testing.T) {
	f := newFixture(t)
	panel, _ := f.cfg.Agent("panel")
	if st := f.rt.Status(panel); st.State != "unconfigured" || !strings.Contains(st.Detail, "POST /api/v1/agents") {
		t.Fatalf("status with no registered agent %+v", st)
	}
	if err := f.rt.Validate(panel); err == nil {
		t.Fatal("an agent with no expert to ask validated")
	}
	broken, _ := f.cfg.Agent("broken")
	if err := f.rt.Validate(broken); err == nil || !strings.Contains(err.Error(), "timeoutSeconds") {
		t.Fatalf("invalid settings validated: %v", err)
	}
	f.addExpert(t, &expert{name: "sec"})
	if st := f.rt.Status(panel); st.State != "ok" {
		t.Fatalf("status with one registered agent %+v", st)
	}
	if out := f.rt.Outbound(f.cfg, panel); !strings.Contains(out, `"panel"`) {
		t.Fatalf("outbound %q", out)
	}
}

func TestRunDeliberatesOnTheUsersMessage(t *testing.T) {
	f := newFixture(t)
	a, b := &expert{name: "sec"}, &expert{name: "perf"}
	f.addExpert(t, a)
	f.addExpert(t, b)
	ctx := context.Background()
	sess, err := f.st.CreateSession(ctx, store.Session{ID: "s1", AgentID: "panel"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &turn.Turn{ID: "t_1", SessionID: sess.ID}
	if _, err := f.st.AddMessage(ctx, store.Message{SessionID: sess.ID, TurnID: tr.ID, Role: "user", Content: "Review the login code"}); err != nil {
		t.Fatal(err)
	}
	panel, _ := f.cfg.Agent("panel")
	out := f.rt.Run(ctx, tr, sess, panel)
	if out.Fail != nil {
		t.Fatalf("failed: %+v", out.Fail)
	}
	if !strings.Contains(out.Final, "SQL injection") || out.Last == nil || out.Last.Content != out.Final {
		t.Fatalf("outcome %+v", out)
	}
	var meta struct {
		RunID string `json:"roundtable_run_id"`
	}
	if err := json.Unmarshal([]byte(out.Last.Meta), &meta); err != nil || meta.RunID == "" {
		t.Fatalf("meta %q: %v", out.Last.Meta, err)
	}
	run, err := f.st.RoundtableRun(ctx, meta.RunID)
	if err != nil || run.Status == store.RunRunning || run.TurnID != tr.ID || run.Source != "agent" || !strings.Contains(run.Task, "keep it short") {
		t.Fatalf("stored run %+v (%v)", run, err)
	}
	if a.called() == 0 || b.called() == 0 {
		t.Fatalf("calls: sec %d, perf %d", a.called(), b.called())
	}
	// Progress went to the publisher, and the rendered result as the turn's delta.
	lines := f.rec.Lines("type")
	if len(lines) < 2 || lines[0] != api.EventRoundtableProgress+" started" || lines[len(lines)-1] != api.EventDelta {
		t.Fatalf("published %q", lines)
	}

	// An empty message is refused before any agent is asked.
	before := a.called()
	tr2 := &turn.Turn{ID: "t_2", SessionID: sess.ID}
	if out := f.rt.Run(ctx, tr2, sess, panel); out.Fail == nil || out.Fail.Code != "empty_message" || a.called() != before {
		t.Fatalf("empty message: %+v, calls %d → %d", out.Fail, before, a.called())
	}
}

// An API round table still running when the runtime closes is stored as
// interrupted, and a new one is refused.
func TestCloseInterruptsAPIRuns(t *testing.T) {
	f := newFixture(t)
	slow := &expert{name: "slow", slow: true}
	f.addExpert(t, slow)
	routes := map[string]func(http.ResponseWriter, *http.Request) error{}
	for _, r := range f.rt.Routes() {
		routes[r.Pattern] = r.Handle
	}
	start := func() (int, api.StartRoundtableResponse) {
		req := httptest.NewRequest("POST", "/v1/roundtables", strings.NewReader(`{"content":"Review the login code"}`))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		var out api.StartRoundtableResponse
		if err := routes["POST /v1/roundtables"](w, req); err != nil {
			return 0, out
		}
		json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	code, started := start()
	if code != http.StatusAccepted || started.ID == "" {
		t.Fatalf("start: %d %+v", code, started)
	}
	testwait.Until(t, "the slow agent is called", 5*time.Second, func() bool { return slow.called() > 0 })
	f.rt.Close()
	run, err := f.st.RoundtableRun(context.Background(), started.ID)
	if err != nil || run.Status != store.RunInterrupted {
		t.Fatalf("run after Close %+v (%v)", run, err)
	}
	if code, _ := start(); code != 0 {
		t.Fatalf("a round table started after Close: %d", code)
	}
}
