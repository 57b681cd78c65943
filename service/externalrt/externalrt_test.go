package externalrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/externalrt"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// TestRunForwardsTheMessageWithItsCallbackURL runs the external runtime
// against a real store, a recording publisher and a real agent endpoint
// (no service): the agent gets the seed's payload with a callback URL on
// the configured base; a failing agent fails the turn with a stored status
// line and is reported failing.
func TestRunForwardsTheMessageWithItsCallbackURL(t *testing.T) {
	var mu sync.Mutex
	var got []api.ExternalInput
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var in api.ExternalInput
		if err := json.Unmarshal(b, &in); err != nil {
			t.Errorf("forward body %s: %v", b, err)
		}
		mu.Lock()
		got = append(got, in)
		mu.Unlock()
	}))
	defer agent.Close()
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[
		{"agentId":"ext","displayName":"Ext","type":"external","external":{"inputUrl":%q,"callbackBaseUrl":"https://jarvis.example/"}},
		{"agentId":"down","displayName":"Down","type":"external","external":{"inputUrl":%q,"callbackBaseUrl":"https://jarvis.example"}},
		{"agentId":"bad","type":"external","external":{"inputUrl":"ftp://x"}}]}`, agent.URL+"/in", agent.URL+"/down")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := &turntest.Recorder{}
	env := turn.Env{Store: st, Publisher: rec, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler),
		Now: time.Now, HTTPClient: &http.Client{}, Version: "test"}
	rt := externalrt.New(env, &callback.Base{}, &redact.Set{})

	ext, _ := cfg.Agent("ext")
	sess, err := st.CreateSession(ctx, store.Session{ID: "S-1", AgentID: "ext"})
	if err != nil {
		t.Fatal(err)
	}
	out := rt.Run(ctx, &turn.Turn{ID: "t_1", SessionID: sess.ID, User: store.Message{Content: "hello"}}, sess, ext)
	if out.Fail != nil || out.Kind != "status" || out.Final == "" {
		t.Fatalf("outcome %+v fail %+v", out, out.Fail)
	}
	if len(got) != 1 || got[0].SessionID != "S-1" || got[0].AgentID != "ext" || got[0].Message.Text != "hello" ||
		!strings.HasPrefix(got[0].CallbackURL, "https://jarvis.example/external/sessions/S-1/messages?token=xcb_") {
		t.Fatalf("the agent got %+v", got)
	}
	if lines := rec.Lines("kind"); len(lines) != 1 || !strings.HasPrefix(lines[0], "status ") {
		t.Fatalf("published %q", lines)
	}
	if s := rt.Status(ext); s.State != "ok" {
		t.Fatalf("status after a good forward %+v", s)
	}

	down, _ := cfg.Agent("down")
	sess2, err := st.CreateSession(ctx, store.Session{ID: "S-2", AgentID: "down"})
	if err != nil {
		t.Fatal(err)
	}
	out = rt.Run(ctx, &turn.Turn{ID: "t_2", SessionID: sess2.ID, User: store.Message{Content: "hello"}}, sess2, down)
	if out.Fail == nil || out.Fail.Code != "external_forward_failed" || out.Last == nil || out.Last.Role != "status" {
		t.Fatalf("failing agent %+v", out)
	}
	if s := rt.Status(down); s.State != "failing" {
		t.Fatalf("status after a failed forward %+v", s)
	}

	// Invalid settings are refused, and say so, before anything is sent.
	bad, _ := cfg.Agent("bad")
	if err := rt.Validate(bad); err == nil || !strings.Contains(err.Error(), "inputUrl") {
		t.Fatalf("validate: %v", err)
	}
	if where := rt.Outbound(cfg, ext); !strings.Contains(where, agent.URL+"/in") {
		t.Fatalf("outbound %q", where)
	}
}
