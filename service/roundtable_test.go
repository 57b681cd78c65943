package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/roundtable"
	"jarvis/service/roundtable/roundtabletest"

	"jarvis/internal/testwait"
)

func withRTSecrets(sec service.Secrets) envOpt {
	return func(e *env, o *service.Options) { o.Secrets = sec }
}

// rtAgent is a scripted round-table agent on a real HTTP server.
type rtAgent struct {
	name string
	mode string // good | slow | late (answers after 1.2 s) | 500 | badjson
	key  string // required bearer key, if set

	mu      sync.Mutex
	calls   []string
	authBad int
}

func newRTAgent(t *testing.T, name, mode, key string) (*rtAgent, string) {
	a := &rtAgent{name: name, mode: mode, key: key}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return a, srv.URL
}

func (a *rtAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.calls = append(a.calls, r.URL.Path)
	a.mu.Unlock()
	if a.key != "" && r.Header.Get("Authorization") != "Bearer "+a.key {
		a.mu.Lock()
		a.authBad++
		a.mu.Unlock()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch a.mode {
	case "slow":
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
	case "late":
		select {
		case <-time.After(1200 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
		return
	case "badjson":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"agent_name": "`+a.name+`", "observations": [`)
		return
	}
	if !roundtabletest.Answer(w, r.URL.Path, a.name) {
		http.NotFound(w, r)
	}
}

func (a *rtAgent) paths() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// call sends a JSON request and returns status and body.
func (e *env) call(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (e *env) register(reg api.RoundtableAgentRegistration) api.RoundtableAgent {
	e.t.Helper()
	st, b := e.call("POST", "/api/v1/agents", reg)
	if st != http.StatusCreated {
		e.t.Fatalf("register %s: %d %s", reg.Name, st, b)
	}
	return decode[api.RoundtableAgent](e.t, b)
}

// followUntil collects a session's events from the start until one of type typ.
func (e *env) followUntil(sid, typ string, timeout time.Duration) []api.StreamEvent {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var evs []api.StreamEvent
	err := e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
		evs = append(evs, ev)
		if ev.Type == typ {
			return api.ErrStopStream
		}
		return nil
	})
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != typ {
		e.t.Fatalf("no %s event (err %v); got %v", typ, err, types(evs))
	}
	return evs
}

func progressOf(t *testing.T, evs []api.StreamEvent) []api.RoundtableProgressEvent {
	var out []api.RoundtableProgressEvent
	for _, ev := range evs {
		if ev.Type == api.EventRoundtableProgress {
			out = append(out, decode[api.RoundtableProgressEvent](t, ev.Data))
		}
	}
	return out
}

func TestRoundtableRegistration(t *testing.T) {
	sec := testpeer.NewSecrets(nil)
	e := newEnv(t, withRTSecrets(sec))
	_, goodURL := newRTAgent(t, "x", "good", "")
	const key = "rt-secret-key-7f3a9c2e51"

	created := e.register(api.RoundtableAgentRegistration{Name: "security_analyst", Domain: "application security", BaseURL: goodURL + "/",
		APIKey: key, Capabilities: []string{"Security", "owasp", "security"}, Mode: "sync"})
	if !created.HasAPIKey || created.APIKeyRef != "roundtable:security_analyst" || created.BaseURL != goodURL ||
		!slices.Equal(created.Capabilities, []string{"security", "owasp"}) || created.TimeoutSeconds != 120 {
		t.Fatalf("created %+v", created)
	}
	if secretOf(sec, "roundtable:security_analyst") != key {
		t.Fatal("key not in the keyring")
	}

	t.Run("duplicate", func(t *testing.T) {
		st, b := e.call("POST", "/api/v1/agents", api.RoundtableAgentRegistration{Name: "security_analyst", Domain: "x", BaseURL: goodURL, APIKey: "other"})
		if st != http.StatusConflict || !strings.Contains(string(b), "agent_exists") {
			t.Fatalf("%d %s", st, b)
		}
		if secretOf(sec, "roundtable:security_analyst") != key {
			t.Fatal("a refused duplicate overwrote the key")
		}
	})

	t.Run("invalid", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			body   string
			fields []string
			status int
		}{
			{"every field", `{"name":"bad name!","domain":"","base_url":"http://169.254.169.254/latest","capabilities":[""],"mode":"async","timeout_seconds":-1}`,
				[]string{"name", "domain", "base_url", "capabilities[0]", "mode", "timeout_seconds"}, 400},
			{"metadata host", `{"name":"m","domain":"d","base_url":"http://metadata.google.internal"}`, []string{"base_url"}, 400},
			{"link-local v6", `{"name":"m","domain":"d","base_url":"http://[fe80::1]:80"}`, []string{"base_url"}, 400},
			{"scheme", `{"name":"m","domain":"d","base_url":"ftp://127.0.0.1"}`, []string{"base_url"}, 400},
			{"missing", `{}`, []string{"name", "domain", "base_url"}, 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				st, eb, _ := raw(t, "POST", e.srv.URL+"/api/v1/agents", testToken, tc.body, nil)
				if st != tc.status || eb.Error.Code != "invalid_registration" {
					t.Fatalf("%d %+v", st, eb)
				}
				var got []string
				for _, f := range eb.Error.Details["fields"].([]any) {
					got = append(got, f.(string))
				}
				if !slices.Equal(got, tc.fields) {
					t.Fatalf("fields %v, want %v (%s)", got, tc.fields, eb.Error.Message)
				}
			})
		}
		st, eb, _ := raw(t, "POST", e.srv.URL+"/api/v1/agents", testToken, `{"name":"m","domain":"d","base_url":"http://169.254.169.254"}`, nil)
		if st != 400 || eb.Error.Details["blocked_address"] != true {
			t.Fatalf("link-local: %d %+v", st, eb)
		}
		if st, _, _ := raw(t, "POST", e.srv.URL+"/api/v1/agents", "", `{"name":"m","domain":"d","base_url":"http://127.0.0.1:1"}`, nil); st != 401 {
			t.Fatalf("no token: %d", st)
		}
	})

	t.Run("read", func(t *testing.T) {
		st, b := e.call("GET", "/api/v1/agents", nil)
		list := decode[api.RoundtableAgentList](t, b)
		if st != 200 || len(list.Agents) != 1 || list.Agents[0].Name != "security_analyst" {
			t.Fatalf("%d %s", st, b)
		}
		if strings.Contains(string(b), key) {
			t.Fatal("the key is in the list")
		}
		if st, b := e.call("GET", "/api/v1/agents/security_analyst", nil); st != 200 || strings.Contains(string(b), key) {
			t.Fatalf("%d %s", st, b)
		}
		if st, b := e.call("GET", "/api/v1/agents/nobody", nil); st != 404 || !strings.Contains(string(b), "agent_not_found") {
			t.Fatalf("%d %s", st, b)
		}
	})

	t.Run("update", func(t *testing.T) {
		domain := "web security"
		st, b := e.call("PATCH", "/api/v1/agents/security_analyst", api.RoundtableAgentPatch{Domain: &domain})
		got := decode[api.RoundtableAgent](t, b)
		if st != 200 || got.Domain != domain || !got.HasAPIKey || got.BaseURL != goodURL {
			t.Fatalf("patch %d %s", st, b)
		}
		bad := "http://169.254.1.1"
		if st, b := e.call("PATCH", "/api/v1/agents/security_analyst", api.RoundtableAgentPatch{BaseURL: &bad}); st != 400 {
			t.Fatalf("bad patch %d %s", st, b)
		}
		if st, _ := e.call("PATCH", "/api/v1/agents/nobody", api.RoundtableAgentPatch{Domain: &domain}); st != 404 {
			t.Fatalf("patch unknown %d", st)
		}
		st, b = e.call("PUT", "/api/v1/agents/security_analyst", api.RoundtableAgentRegistration{Domain: "security", BaseURL: goodURL, TimeoutSeconds: 30})
		got = decode[api.RoundtableAgent](t, b)
		if st != 200 || got.HasAPIKey || got.TimeoutSeconds != 30 || got.Domain != "security" {
			t.Fatalf("put %d %s", st, b)
		}
		if _, ok := sec.Has("roundtable:security_analyst"); ok {
			t.Fatal("PUT without api_key kept the key")
		}
		newKey := key + "-2"
		if st, b := e.call("PATCH", "/api/v1/agents/security_analyst", api.RoundtableAgentPatch{APIKey: &newKey}); st != 200 || secretOf(sec, "roundtable:security_analyst") != newKey {
			t.Fatalf("patch key %d %s", st, b)
		}
		if st, _ := e.call("PUT", "/api/v1/agents/security_analyst", api.RoundtableAgentRegistration{Name: "other", Domain: "d", BaseURL: goodURL}); st != 400 {
			t.Fatalf("rename %d", st)
		}
	})

	t.Run("persists across a restart", func(t *testing.T) {
		e.register(api.RoundtableAgentRegistration{Name: "to_delete", Domain: "general", BaseURL: goodURL, APIKey: "delete-me-key"})
		e.stop()
		e.start(withRTSecrets(sec))
		st, b := e.call("GET", "/api/v1/agents", nil)
		list := decode[api.RoundtableAgentList](t, b)
		if st != 200 || len(list.Agents) != 2 || list.Agents[0].TimeoutSeconds != 30 {
			t.Fatalf("%d %s", st, b)
		}
		if st, _ := e.call("DELETE", "/api/v1/agents/to_delete", nil); st != 204 {
			t.Fatalf("delete %d", st)
		}
		if _, ok := sec.Has("roundtable:to_delete"); ok {
			t.Fatal("delete kept the key")
		}
		if st, _ := e.call("DELETE", "/api/v1/agents/to_delete", nil); st != 404 {
			t.Fatalf("second delete %d", st)
		}
	})

	t.Run("keys never in the database", func(t *testing.T) {
		e.stop() // flush the WAL
		files, _ := filepath.Glob(filepath.Join(e.dir, "jarvis.db*"))
		if len(files) == 0 {
			t.Fatal("no database file")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{key, "delete-me-key"} {
				if bytes.Contains(b, []byte(k)) {
					t.Fatalf("%s contains the API key %q", f, k)
				}
			}
		}
	})
}

func TestRoundtableKeyringUnavailable(t *testing.T) {
	e := newEnv(t) // envSecrets: read-only, empty
	_, url := newRTAgent(t, "x", "good", "")
	st, b := e.call("POST", "/api/v1/agents", api.RoundtableAgentRegistration{Name: "keyed", Domain: "d", BaseURL: url, APIKey: "k-123"})
	if st != http.StatusServiceUnavailable || !strings.Contains(string(b), "JARVIS_SECRET_ROUNDTABLE_KEYED") {
		t.Fatalf("%d %s", st, b)
	}
	if st, _ := e.call("GET", "/api/v1/agents/keyed", nil); st != 404 {
		t.Fatalf("a registration whose key failed was kept: %d", st)
	}
}

// roSecrets is a read-only secret store: the environment override alone.
type roSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *roSecrets) Get(ref string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[ref]; ok {
		return v, nil
	}
	return "", errors.New("not set")
}

// TestRoundtableEnvKey: without a writable keyring the environment override
// holding the same key is accepted; a key that later cannot be read excludes
// the agent from the run, with the reason.
func TestRoundtableEnvKey(t *testing.T) {
	sec := &roSecrets{m: map[string]string{"roundtable:keyed": "k-123"}}
	e := newEnv(t, withRTSecrets(sec))
	agent, url := newRTAgent(t, "keyed", "good", "k-123")
	if got := e.register(api.RoundtableAgentRegistration{Name: "keyed", Domain: "general", BaseURL: url, APIKey: "k-123"}); !got.HasAPIKey {
		t.Fatalf("%+v", got)
	}
	_, url2 := newRTAgent(t, "plain", "good", "")
	e.register(api.RoundtableAgentRegistration{Name: "plain", Domain: "general", BaseURL: url2})
	sec.mu.Lock()
	delete(sec.m, "roundtable:keyed")
	sec.mu.Unlock()
	st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review it"})
	if st != 202 {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	evs := e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 30*time.Second)
	res := decode[roundtable.Result](t, decode[api.RoundtableResultEvent](t, evs[len(evs)-1].Data).Result)
	if len(res.Exclusions) == 0 || res.Exclusions[0].Agent != "keyed" || res.Exclusions[0].Kind != roundtable.ExcludedInvalidAgent ||
		!strings.Contains(res.Exclusions[0].Reason, "API key") || len(agent.paths()) != 0 || res.Status != roundtable.StatusCompleted {
		t.Fatalf("result %+v, calls %v", res, agent.paths())
	}
}

var (
	exampleOnce sync.Once
	exampleBin  string
	exampleErr  error
)

// startExampleAgent runs examples/roundtable-agent as a subprocess.
func startExampleAgent(t *testing.T, name, domain, key string) string {
	t.Helper()
	exampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rt-agent")
		if err != nil {
			exampleErr = err
			return
		}
		exampleBin, exampleErr = proc.Build(dir, "jarvis/examples/roundtable-agent")
	})
	if exampleErr != nil {
		t.Fatal(exampleErr)
	}
	args := []string{"-addr", "127.0.0.1:0", "-name", name, "-domain", domain}
	if key != "" {
		args = append(args, "-api-key", key)
	}
	p, err := proc.Start(exampleBin, args, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p.URL
}

// TestRoundtableAPI runs a full round table through the real service: two
// example agents (one with a key), and agents that are slow past the
// timeout, answer 500, and answer invalid JSON.
func TestRoundtableAPI(t *testing.T) {
	sec := testpeer.NewSecrets(nil)
	e := newEnv(t, withRTSecrets(sec))
	e.register(api.RoundtableAgentRegistration{Name: "alpha", Domain: "general", BaseURL: startExampleAgent(t, "alpha", "general", "")})
	e.register(api.RoundtableAgentRegistration{Name: "beta", Domain: "security", BaseURL: startExampleAgent(t, "beta", "security", "beta-key-123"),
		APIKey: "beta-key-123", Capabilities: []string{"security"}})
	keyed, keyedURL := newRTAgent(t, "gamma", "good", "gamma-key")
	e.register(api.RoundtableAgentRegistration{Name: "gamma", Domain: "general", BaseURL: keyedURL, APIKey: "gamma-key"})
	_, slowURL := newRTAgent(t, "slow", "slow", "")
	e.register(api.RoundtableAgentRegistration{Name: "slow", Domain: "general", BaseURL: slowURL})
	_, failURL := newRTAgent(t, "broken", "500", "")
	e.register(api.RoundtableAgentRegistration{Name: "broken", Domain: "general", BaseURL: failURL})
	bad, badURL := newRTAgent(t, "garbled", "badjson", "")
	e.register(api.RoundtableAgentRegistration{Name: "garbled", Domain: "general", BaseURL: badURL})
	off, offURL := newRTAgent(t, "unrelated", "good", "")
	e.register(api.RoundtableAgentRegistration{Name: "unrelated", Domain: "astronomy", BaseURL: offURL})

	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			body, code string
			status     int
		}{
			{`{"content":""}`, "missing_field", 400},
			{`{"content":"x","participants":["alpha","ghost"]}`, "unknown_participants", 400},
			{`{"content":"x","timeout_seconds":-3}`, "invalid_field", 400},
			{`{"content":"x","general_session_id":"g_nope"}`, "session_not_found", 404},
		} {
			st, eb, _ := raw(t, "POST", e.srv.URL+"/v1/roundtables", testToken, tc.body, nil)
			if st != tc.status || eb.Error.Code != tc.code {
				t.Errorf("%s: %d %+v", tc.body, st, eb)
			}
		}
		if st, b := e.call("GET", "/v1/roundtables/rt_nope", nil); st != 404 {
			t.Errorf("unknown run: %d %s", st, b)
		}
	})

	st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review the login handler for security problems",
		Constraints: []string{"Must cite evidence"}, TimeoutSeconds: 1})
	if st != http.StatusAccepted {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	if start.GeneralSessionID == "" || !strings.HasPrefix(start.ID, "rt_") || slices.Contains(start.Participants, "unrelated") || len(start.Participants) != 6 {
		t.Fatalf("start %+v", start)
	}
	evs := e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 60*time.Second)
	prog := progressOf(t, evs)

	seen := map[string][]string{} // type → agents
	var analyzeStart *api.RoundtableProgressEvent
	waiting := 0
	for i, p := range prog {
		if p.RunID != start.ID {
			t.Fatalf("progress of another run: %+v", p)
		}
		seen[p.Type] = append(seen[p.Type], p.Agent)
		if p.Type == "phase_started" && p.Phase == "analyze" {
			analyzeStart = &prog[i]
		}
		if p.Type == "waiting" && slices.Contains(p.WaitingFor, "slow") {
			waiting++
		}
		if p.Type == "agent_failed" && len(p.Exclusion) == 0 {
			t.Errorf("agent_failed without exclusion: %+v", p)
		}
	}
	if prog[0].Type != "started" || len(prog[0].Participants) != 6 {
		t.Fatalf("first progress %+v", prog[0])
	}
	if analyzeStart == nil || len(analyzeStart.WaitingFor) != 6 || analyzeStart.TimeoutSeconds != 1 {
		t.Fatalf("analyze start %+v", analyzeStart)
	}
	if waiting == 0 {
		t.Errorf("no waiting event named the slow agent: %v", seen)
	}
	for _, a := range []string{"alpha", "beta", "gamma"} {
		if !slices.Contains(seen["agent_responded"], a) || !slices.Contains(seen["vote"], a) {
			t.Errorf("%s: responded %v votes %v", a, seen["agent_responded"], seen["vote"])
		}
	}
	for _, a := range []string{"slow", "broken", "garbled"} {
		if !slices.Contains(seen["agent_failed"], a) {
			t.Errorf("%s did not fail: %v", a, seen["agent_failed"])
		}
	}
	if len(seen["synthesis"]) != 1 {
		t.Errorf("synthesis events %v", seen)
	}
	resEv := decode[api.RoundtableResultEvent](t, evs[len(evs)-1].Data)
	if resEv.RunID != start.ID || resEv.Status != "completed" || resEv.Outcome != "approved" || !strings.HasPrefix(resEv.Markdown, "## Round table: Review the login handler") {
		t.Fatalf("result event %+v", resEv)
	}
	if keyed.authBad != 0 || len(keyed.paths()) != 3 {
		t.Errorf("keyed agent: %d unauthorized, calls %v", keyed.authBad, keyed.paths())
	}
	if len(off.paths()) != 0 {
		t.Errorf("an irrelevant agent was called: %v", off.paths())
	}
	if got := bad.paths(); len(got) == 0 || got[0] != "/analyze" {
		t.Errorf("garbled calls %v", got)
	}

	st, b = e.call("GET", "/v1/roundtables/"+start.ID, nil)
	run := decode[api.RoundtableRun](t, b)
	if st != 200 || run.Status != "completed" || run.Source != "api" || run.Task.Content != "Review the login handler for security problems" ||
		run.Task.Context["source"] != "round_table" || run.Markdown == "" || run.FinishedAt == "" {
		t.Fatalf("run %d %s", st, b)
	}
	kinds := map[string][]string{}
	for _, a := range run.Answers {
		kinds[a.Kind] = append(kinds[a.Kind], a.Agent)
	}
	slices.Sort(kinds["analysis"])
	if !slices.Equal(kinds["analysis"], []string{"alpha", "beta", "gamma"}) || len(kinds["vote"]) != 3 {
		t.Fatalf("answers %v", kinds)
	}
	res := decode[roundtable.Result](t, run.Result)
	excl := map[string]roundtable.ExclusionKind{}
	for _, x := range res.Exclusions {
		if x.Phase == roundtable.PhaseAnalyze {
			excl[x.Agent] = x.Kind
		}
	}
	if excl["slow"] != roundtable.ExcludedTimeout || excl["broken"] != roundtable.ExcludedHTTPError || excl["garbled"] != roundtable.ExcludedInvalidResponse {
		t.Fatalf("exclusions %v", res.Exclusions)
	}
	// The scripted model does not answer in JSON: the deterministic synthesis took over.
	if res.Synthesizer != "deterministic" || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "synthesizer failed") }) {
		t.Errorf("synthesizer %q warnings %v", res.Synthesizer, res.Warnings)
	}

	st, b = e.call("GET", "/api/v1/agents/slow", nil)
	if st != http.StatusOK {
		t.Fatalf("GET the slow agent: %d %s", st, b)
	}
	if h := decode[api.RoundtableAgent](t, b).Health; h.State != "unhealthy" {
		t.Errorf("slow agent health %+v", h)
	}
	st, b = e.call("GET", "/api/v1/agents/alpha", nil)
	if st != http.StatusOK {
		t.Fatalf("GET agent alpha: %d %s", st, b)
	}
	if h := decode[api.RoundtableAgent](t, b).Health; h.State != "ok" {
		t.Errorf("alpha health %+v", h)
	}
	st, b = e.call("GET", "/v1/roundtables?general_session_id="+start.GeneralSessionID, nil)
	if st != http.StatusOK {
		t.Fatalf("GET the session's round tables: %d %s", st, b)
	}
	if list := decode[api.RoundtableRunList](t, b); len(list.Runs) != 1 || list.Runs[0].ID != start.ID {
		t.Errorf("list %s", b)
	}

	t.Run("named participants", func(t *testing.T) {
		st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Plan the telescope maintenance", Participants: []string{"unrelated"},
			GeneralSessionID: start.GeneralSessionID})
		s2 := decode[api.StartRoundtableResponse](t, b)
		if st != 202 || s2.GeneralSessionID != start.GeneralSessionID || !slices.Equal(s2.Participants, []string{"unrelated"}) {
			t.Fatalf("%d %s", st, b)
		}
		var r api.RoundtableRun
		testwait.Until(t, "the run to finish", 30*time.Second, func() bool {
			_, b = e.call("GET", "/v1/roundtables/"+s2.ID, nil)
			r = decode[api.RoundtableRun](t, b)
			return r.Status != "running"
		})
		if r.Status != "completed" || !slices.Equal(off.paths(), []string{"/analyze", "/vote"}) { // alone: nobody to challenge
			t.Fatalf("run %s, calls %v", b, off.paths())
		}
	})
}

func TestRoundtableLLMSynthesis(t *testing.T) {
	e := newEnv(t, withRTSecrets(testpeer.NewSecrets(nil)))
	e.upstream.Respond = func(req openai.ChatCompletionRequest) testpeer.Script {
		if len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, "chair of a round table") {
			return testpeer.Script{Deltas: []string{"```json\n", `{"recommended_direction":"Parameterize every query, then add rate limiting.",`,
				`"key_findings":["one#1","nope#9"],"trade_offs":["Rate limits slow bulk users"],"minority_views":[]}`, "\n```"}}
		}
		return testpeer.Directives(req)
	}
	for _, n := range []string{"one", "two"} {
		_, url := newRTAgent(t, n, "good", "")
		e.register(api.RoundtableAgentRegistration{Name: n, Domain: "general", BaseURL: url})
	}
	st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review the login handler"})
	if st != 202 {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	evs := e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 30*time.Second)
	res := decode[roundtable.Result](t, decode[api.RoundtableResultEvent](t, evs[len(evs)-1].Data).Result)
	if res.Synthesizer != "llm:test-model" || res.RecommendedDirection != "Parameterize every query, then add rate limiting." ||
		len(res.KeyFindings) != 1 || res.KeyFindings[0].AgentName != "one" || !slices.Equal(res.TradeOffs, []string{"Rate limits slow bulk users"}) {
		t.Fatalf("result %+v", res)
	}
}

// TestRoundtableTool drives the round_table tool through the scripted model.
func TestRoundtableTool(t *testing.T) {
	e := newEnv(t, withRTSecrets(testpeer.NewSecrets(nil)))
	for _, n := range []string{"one", "two"} {
		_, url := newRTAgent(t, n, "good", "")
		e.register(api.RoundtableAgentRegistration{Name: n, Domain: "general", BaseURL: url})
	}
	sid := e.session("rt-tool")
	var c collect
	approve := e.approveServiceTools(sid)
	err := e.c.ChatStream(context.Background(), sid, `[[tool round_table {"task":"Review the login handler","participants":["one","two"]}]]`, func(ev api.StreamEvent) error {
		c.add(ev)
		approve(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := c.all()
	var tr *api.ToolResult
	for _, ev := range evs {
		if ev.Type == api.EventToolResult {
			r := decode[api.ToolResult](t, ev.Data)
			tr = &r
		}
	}
	if tr == nil || !tr.OK || tr.Source != "service" || tr.Name != "round_table" || !strings.HasPrefix(tr.Result, "## Round table: Review the login handler") {
		t.Fatalf("tool result %+v; events %v", tr, types(evs))
	}
	if final := text(evs, api.EventFinal); !strings.Contains(final, "Round table: Review the login handler") {
		t.Fatalf("final %q", final)
	}
	prog := progressOf(t, evs)
	if len(prog) == 0 || prog[0].TurnID == "" {
		t.Fatalf("progress on the turn's stream: %v", types(evs))
	}
	_, b := e.call("GET", "/v1/roundtables?general_session_id="+sid, nil)
	list := decode[api.RoundtableRunList](t, b)
	if len(list.Runs) != 1 || list.Runs[0].Source != "tool" || list.Runs[0].Status != "completed" || list.Runs[0].TurnID != prog[0].TurnID {
		t.Fatalf("runs %s", b)
	}

	t.Run("no agents", func(t *testing.T) {
		for _, n := range []string{"one", "two"} {
			e.call("DELETE", "/api/v1/agents/"+n, nil)
		}
		if final := text(e.agChat(sid, `[[tool round_table {"task":"anything"}]]`), api.EventFinal); !strings.Contains(final, "no round-table agents are registered") {
			t.Fatalf("final %q", final)
		}
	})
}

// TestRoundtableAgentType: each message to a "roundtable" agent is a round
// table; the reply is the Markdown result.
func TestRoundtableAgentType(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},
		"agents":[{"agentId":"general","displayName":"General"},
		          {"agentId":"council","displayName":"Council","type":"roundtable","roundtable":{"constraints":["Must cite evidence"],"timeoutSeconds":5}},
		          {"agentId":"broken_council","displayName":"Broken","type":"roundtable","roundtable":{"participants":["ghost"]}}]}`, e.upSrv.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.start(withRTSecrets(testpeer.NewSecrets(nil)))

	sess := func(agent string) string {
		r, err := e.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j-" + agent, AgentID: agent})
		if err != nil {
			t.Fatal(err)
		}
		return r.GeneralSessionID
	}
	sid := sess("council")

	// With nobody registered the turn fails clearly.
	res, err := e.c.Chat(context.Background(), sid, "Review the authentication module")
	if err == nil {
		t.Fatalf("no agents: %+v", res)
	}
	_, b := e.call("GET", "/v1/agents", nil)
	if !strings.Contains(string(b), "no round-table agents are registered") {
		t.Errorf("agent status %s", b)
	}

	for _, n := range []string{"one", "two"} {
		_, url := newRTAgent(t, n, "good", "")
		e.register(api.RoundtableAgentRegistration{Name: n, Domain: "general", BaseURL: url})
	}
	var c collect
	if err := e.c.ChatStream(context.Background(), sid, "Review the authentication module", func(ev api.StreamEvent) error { c.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	evs := c.all()
	final := text(evs, api.EventFinal)
	if !strings.HasPrefix(final, "## Round table: Review the authentication module") || !strings.Contains(final, "### Votes") {
		t.Fatalf("final %q (events %v)", final, types(evs))
	}
	ts := types(evs)
	if i, j := slices.Index(ts, api.EventRoundtableProgress), slices.Index(ts, api.EventFinal); i < 0 || i > j || !slices.Contains(ts, api.EventRoundtableResult) {
		t.Fatalf("events %v", ts)
	}
	st, b := e.call("GET", "/v1/sessions/"+sid+"/messages", nil)
	tr := decode[api.Transcript](t, b)
	last := tr.Messages[len(tr.Messages)-1]
	if st != 200 || last.Role != "assistant" || last.Text != final || !strings.Contains(string(last.Meta), "roundtable_run_id") {
		t.Fatalf("transcript %s", b)
	}
	_, b = e.call("GET", "/v1/roundtables?general_session_id="+sid, nil)
	list := decode[api.RoundtableRunList](t, b)
	if len(list.Runs) != 1 || list.Runs[0].Source != "agent" || !slices.Equal(list.Runs[0].Task.Constraints, []string{"Must cite evidence"}) {
		t.Fatalf("runs %s", b)
	}
	_, b = e.call("GET", "/v1/agents", nil)
	for _, a := range decode[api.AgentList](t, b).Agents {
		if a.AgentID == "council" && a.Status.State != "ok" {
			t.Errorf("council status %+v", a.Status)
		}
	}

	if _, err := e.c.Chat(context.Background(), sess("broken_council"), "Review it"); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("unknown configured participant: %v", err)
	}
}

// TestRoundtablePerAgentTimeouts: each agent is waited for its own
// registered timeout. An agent registered with 1 s that never answers is
// dropped after 1 s, while one registered without a timeout (120 s) and
// answering after 1.2 s takes part: the table used to wait for every agent
// as long as the largest registered timeout (here 1 s, an unset one
// counting as 0), and so dropped the second. The phase_started event says
// until when each agent is awaited.
func TestRoundtablePerAgentTimeouts(t *testing.T) {
	e := newEnv(t, withRTSecrets(testpeer.NewSecrets(nil)))
	_, hungURL := newRTAgent(t, "hung", "slow", "")
	e.register(api.RoundtableAgentRegistration{Name: "hung", Domain: "general", BaseURL: hungURL, TimeoutSeconds: 1})
	_, lateURL := newRTAgent(t, "late", "late", "")
	e.register(api.RoundtableAgentRegistration{Name: "late", Domain: "general", BaseURL: lateURL})
	st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review it", Participants: []string{"hung", "late"}})
	if st != http.StatusAccepted {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	evs := e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 60*time.Second)
	var analyze *api.RoundtableProgressEvent
	responded := false
	for _, p := range progressOf(t, evs) {
		if p.Type == "phase_started" && p.Phase == "analyze" {
			analyze = &p
		}
		if p.Type == "agent_responded" && p.Phase == "analyze" && p.Agent == "late" {
			responded = true
		}
	}
	if analyze == nil || len(analyze.WaitingUntil) != 2 || analyze.TimeoutSeconds != 120 {
		t.Fatalf("analyze phase_started %+v", analyze)
	}
	hung, _ := time.Parse(time.RFC3339, analyze.WaitingUntil["hung"])
	late, _ := time.Parse(time.RFC3339, analyze.WaitingUntil["late"])
	if d := late.Sub(hung); d < 118*time.Second || d > 120*time.Second { // 120 s and 1 s from the same start, in whole seconds
		t.Fatalf("waiting_until %v: want hung's 1 s and late's 120 s from the phase start", analyze.WaitingUntil)
	}
	if !strings.Contains(analyze.Message, "hung (until ") || !strings.Contains(analyze.Message, "late (until ") {
		t.Fatalf("the message does not say whom the table waits for until when: %q", analyze.Message)
	}
	if !responded {
		t.Fatal("the agent without a registered timeout was not waited for its own 120 s")
	}
	res := decode[api.RoundtableResultEvent](t, evs[len(evs)-1].Data)
	var result roundtable.Result
	if err := json.Unmarshal(res.Result, &result); err != nil {
		t.Fatal(err)
	}
	timedOut := false
	for _, x := range result.Exclusions {
		if x.Agent == "late" && x.Kind != roundtable.ExcludedSkipped { // skipped: nobody else's analysis to challenge
			t.Fatalf("late was excluded: %+v", x)
		}
		if x.Agent == "hung" && x.Kind == roundtable.ExcludedTimeout && strings.Contains(x.Reason, "within 1s") {
			timedOut = true
		}
	}
	if !timedOut {
		t.Fatalf("hung was not dropped after its own 1 s: %+v", result.Exclusions)
	}
	if len(result.Analyses) != 1 || result.Analyses[0].AgentName != "late" {
		t.Fatalf("analyses %+v, want late's", result.Analyses)
	}
}

func TestRoundtableCancel(t *testing.T) {
	e := newEnv(t, withRTSecrets(testpeer.NewSecrets(nil)))
	_, url := newRTAgent(t, "slow", "slow", "")
	e.register(api.RoundtableAgentRegistration{Name: "slow", Domain: "general", BaseURL: url})
	st, b := e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review it", TimeoutSeconds: 60})
	if st != 202 {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	if st, b := e.call("POST", "/v1/roundtables/"+start.ID+"/cancel", nil); st != 200 || !strings.Contains(string(b), `"cancelled":true`) {
		t.Fatalf("cancel %d %s", st, b)
	}
	evs := e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 30*time.Second)
	if r := decode[api.RoundtableResultEvent](t, evs[len(evs)-1].Data); r.Status != "cancelled" {
		t.Fatalf("result %+v", r)
	}
	_, b = e.call("GET", "/v1/roundtables/"+start.ID, nil)
	if r := decode[api.RoundtableRun](t, b); r.Status != "cancelled" || r.FinishedAt == "" {
		t.Fatalf("run %s", b)
	}
	if st, _ := e.call("POST", "/v1/roundtables/rt_nope/cancel", nil); st != 404 {
		t.Fatalf("cancel unknown %d", st)
	}
}

func secretOf(s *testpeer.Secrets, ref string) string {
	v, _ := s.Has(ref)
	return v
}
