package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

const testToken = "test-token-0123456789"

// env is the real service in httptest against a scripted upstream, with a
// real SQLite file in a temp dir.
type env struct {
	t        testing.TB
	dir      string
	upstream *testpeer.OpenAI
	upSrv    *httptest.Server
	cfg      *config.Config
	svc      *service.Service
	srv      *httptest.Server
	c        *api.Client
}

type envOpt func(*env, *service.Options)

func withToolTimeout(d time.Duration) envOpt {
	return func(e *env, o *service.Options) { o.Config.ToolResultTimeoutSeconds = int(d / time.Second) }
}

func withHeartbeat(d time.Duration) envOpt {
	return func(e *env, o *service.Options) { o.HeartbeatEvery = d }
}

func newEnvB(b *testing.B, opts ...envOpt) *env { return newEnv(b, opts...) }

func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	e.cfg = testConfig(e.upSrv.URL + "/v1")
	e.start(opts...)
	return e
}

func testConfig(baseURL string) *config.Config {
	c, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},"upstreamTimeoutSeconds":10}`, baseURL)))
	if err != nil {
		panic(err)
	}
	return c
}

// start (re)starts the service on the same data dir.
func (e *env) start(opts ...envOpt) {
	e.t.Helper()
	o := service.Options{DataDir: e.dir, Config: e.cfg, Token: testToken, Secrets: envSecrets{}}
	for _, f := range opts {
		f(e, &o)
	}
	svc, err := service.New(context.Background(), o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
	e.srv = httptest.NewServer(svc.Handler())
	e.c = api.NewClient(e.srv.URL, testToken, nil)
	e.t.Cleanup(e.stop)
}

func (e *env) stop() {
	if e.svc == nil {
		return
	}
	e.srv.CloseClientConnections()
	e.srv.Close()
	e.svc.Close()
	e.svc = nil
}

type envSecrets struct{}

func (envSecrets) Get(ref string) (string, error) { return "", errors.New("no secrets in tests") }

func (e *env) session(jid string) string {
	e.t.Helper()
	r, err := e.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: jid})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.GeneralSessionID
}

// collect gathers a stream's events.
type collect struct {
	mu  sync.Mutex
	evs []api.StreamEvent
}

func (c *collect) add(ev api.StreamEvent) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
}

func (c *collect) all() []api.StreamEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]api.StreamEvent(nil), c.evs...)
}

func types(evs []api.StreamEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func text(evs []api.StreamEvent, typ string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == typ {
			var d api.TextEvent
			json.Unmarshal(e.Data, &d)
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// answerTools answers every tool.request of a stream with fn's result.
func (e *env) answerTools(sid string, fn func(api.ToolCall) api.ToolResult) func(api.StreamEvent) {
	return func(ev api.StreamEvent) {
		if ev.Type != api.EventToolRequest {
			return
		}
		tc := decode[api.ToolCall](e.t, ev.Data)
		r := fn(tc)
		r.ID = tc.ID
		if err := e.c.PostToolResult(context.Background(), sid, r); err != nil {
			e.t.Errorf("post tool result: %v", err)
		}
	}
}

func raw(t *testing.T, method, url, token string, body string, hdr map[string]string) (int, api.ErrorBody, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb, resp.Header
}
