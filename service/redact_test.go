package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

// echoAgent answers every request with 401 and everything it received: the
// request line, every header (the credentials too) and the body.
func echoAgent(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "401 invalid credentials: %s %s\n", r.Method, r.URL)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(b.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A proxy agent and a round-table agent that echo the credentials they are
// sent: the secrets appear in no answer of the API, no event, no log line,
// no file of the data dir and no request to the model provider.
func TestEchoedSecretsAreRedactedEverywhere(t *testing.T) {
	const (
		pxSecret = "px-SECRET-7f3a9c1e5b2d"
		rtSecret = "rt-SECRET-4e8b0d6a2c9f"
	)
	echo := echoAgent(t)
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	sec := testpeer.NewSecrets(map[string]string{"pxkey": pxSecret})
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},
		"agents":[{"agentId":"general","displayName":"General"},
		{"agentId":"px","displayName":"Echo proxy","type":"proxy","proxy":{"url":%q,"headers":{"Authorization":"Bearer {{secret:pxkey}}"},"routeToUser":true,"timeoutSeconds":5}}]}`,
		e.upSrv.URL+"/v1", echo+"/agent")))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.start(func(_ *env, o *service.Options) {
		o.Secrets = sec
		o.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logBuf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var seen bytes.Buffer // every answer of the API
	keep := func(v any) {
		b, _ := json.Marshal(v)
		seen.Write(b)
	}
	ctx := context.Background()

	// The proxy agent, straight.
	pxs := e.agentSession("px")
	evs := e.chat(pxs, "hello")
	keep(evs)
	if text(evs, api.EventError) == "" && !strings.Contains(string(mustJSON(evs)), "proxy_") {
		t.Fatalf("no error from the echoing agent: %v", types(evs))
	}
	_, _ = e.c.Chat(ctx, pxs, "again") // the non-streamed chat's error body
	if code, eb, _ := raw(t, "POST", e.srv.URL+"/v1/chat", testToken, `{"general_session_id":"`+pxs+`","message":{"parts":[{"type":"text","text":"x"}]}}`, nil); code < 400 {
		t.Fatalf("chat %d", code)
	} else {
		keep(eb)
	}
	keep(e.agentInfo("px"))
	keep(e.transcript(pxs))
	keep(e.followUntil(pxs, api.EventError, 5*time.Second))
	st, b := e.call("POST", "/v1/agents/px/test", map[string]string{"text": "hi"})
	seen.Write(b)
	if st == 0 {
		t.Fatal("test action")
	}

	// Through agents_message: the result goes to the model.
	gs := e.session("g1")
	keep(e.agChat(gs, `[[tool agents_message {"agentId":"px","content":"hi","mode":"sync"}]]`))

	// A round-table agent that echoes its key.
	e.register(api.RoundtableAgentRegistration{Name: "echo", Domain: "general", BaseURL: echo, APIKey: rtSecret})
	_, good := newRTAgent(t, "good", "good", "")
	e.register(api.RoundtableAgentRegistration{Name: "good", Domain: "general", BaseURL: good})
	keep(e.agChat(gs, `[[tool round_table {"task":"Review the login handler","participants":["echo","good"]}]]`))
	st, b = e.call("POST", "/v1/roundtables", api.StartRoundtableRequest{Content: "Review it", Participants: []string{"echo", "good"}})
	if st != http.StatusAccepted {
		t.Fatalf("%d %s", st, b)
	}
	start := decode[api.StartRoundtableResponse](t, b)
	keep(e.followUntil(start.GeneralSessionID, api.EventRoundtableResult, 30*time.Second))
	_, b = e.call("GET", "/v1/roundtables/"+start.ID, nil)
	seen.Write(b)
	if !strings.Contains(string(b), "invalid credentials") {
		t.Fatalf("the round-table agent was not excluded for its answer: %s", b)
	}
	_, b = e.call("GET", "/api/v1/agents/echo", nil)
	seen.Write(b)
	keep(e.upstream.Requests())
	e.stop() // flush the store

	files := dataDirBytes(e.dir)
	logMu.Lock()
	logged := logBuf.String()
	logMu.Unlock()
	if !strings.Contains(seen.String(), "[redacted]") {
		t.Errorf("the echoed credentials were not even shown redacted; the test proves nothing")
	}
	for _, secret := range []string{pxSecret, rtSecret} {
		for where, text := range map[string]string{"API answers and events": seen.String(), "the log": logged, "the data dir": files.String()} {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("%s is in %s: …%s…", secret, where, text[max(0, i-200):min(len(text), i+60)])
			}
		}
		for i, req := range e.upstream.Requests() {
			if strings.Contains(string(mustJSON(req)), secret) {
				t.Errorf("%s is in model request %d", secret, i)
			}
		}
	}
}

// dataDirBytes is every file under dir, one after the other: what is at rest.
func dataDirBytes(dir string) *bytes.Buffer {
	var files bytes.Buffer
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			files.Write(b)
		}
		return nil
	})
	return &files
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
