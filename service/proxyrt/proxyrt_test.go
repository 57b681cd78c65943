package proxyrt_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/proxy/proxytest"
	"jarvis/service/proxyrt"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// newRuntime is the proxy runtime over a real store, with the scripted
// Agent Protocol peer as its agents; no service and no HTTP server of ours.
func newRuntime(t *testing.T) (*proxyrt.Runtime, *store.Store, *turntest.Recorder, *config.Config, string) {
	t.Helper()
	pa := &proxytest.Agent{}
	peer := httptest.NewServer(pa.Handler())
	t.Cleanup(func() { peer.Close(); pa.Close() })
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[
		{"agentId":"px","displayName":"Px","type":"proxy","proxy":{"url":%q,"routeToUser":true}},
		{"agentId":"down","displayName":"Down","type":"proxy","proxy":{"url":%q}},
		{"agentId":"bad","type":"proxy","proxy":{"url":"ftp://nowhere","method":"BREW"}}]}`, peer.URL+"/sync", peer.URL+"/status/500")))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "jarvis.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := &turntest.Recorder{}
	env := turn.Env{Store: st, Publisher: rec, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler), Now: time.Now}
	rt, err := proxyrt.New(context.Background(), env, &callback.Base{}, &redact.Set{})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st, rec, cfg, peer.URL
}

func TestRunCallsTheAgentAndReportsItsHealth(t *testing.T) {
	rt, st, rec, cfg, peerURL := newRuntime(t)
	px, _ := cfg.Agent("px")
	sess, err := st.CreateSession(context.Background(), store.Session{ID: "s1", AgentID: "px"})
	if err != nil {
		t.Fatal(err)
	}
	out := rt.Run(context.Background(), &turn.Turn{ID: "t_1", SessionID: sess.ID, User: store.Message{Content: "hi"}}, sess, px)
	if out.Fail != nil || out.Final != "echo: hi" || out.Last == nil || !strings.Contains(out.Last.Meta, `"proxyAgent":"px"`) {
		t.Fatalf("outcome %+v fail %+v", out, out.Fail)
	}
	// routeToUser on: no note; a sync answer has no deltas; the agent's
	// first sessionInfo.status is news.
	if strings.Join(rec.Lines("kind"), "|") != "status agent_status" {
		t.Fatalf("published %q", rec.Lines("kind"))
	}
	if st := rt.Status(px); st.State != "ok" {
		t.Fatalf("status after a good call %+v", st)
	}

	// A failing agent: the turn fails with the error-event code of its kind,
	// the agent is reported failing, and routeToUser off adds the note.
	down, _ := cfg.Agent("down")
	out = rt.Run(context.Background(), &turn.Turn{ID: "t_2", SessionID: sess.ID, User: store.Message{Content: "hi"}}, sess, down)
	if out.Fail == nil || out.Fail.Code != "proxy_status" || !strings.HasPrefix(out.Fail.Message, "Down: ") {
		t.Fatalf("failing agent %+v", out.Fail)
	}
	if st := rt.Status(down); st.State != "failing" {
		t.Fatalf("status after a failed call %+v", st)
	}
	if strings.Join(rec.Lines("kind"), "|") != "status agent_status|status route" {
		t.Fatalf("published %q", rec.Lines("kind"))
	}

	// What the gate and GET /v1/agents are told.
	if where := rt.Outbound(cfg, px); !strings.Contains(where, `proxy agent "px" at `+peerURL+"/sync") {
		t.Fatalf("outbound %q", where)
	}
	var info api.AgentInfo
	rt.Describe(px, &info)
	if info.Proxy == nil || !info.Proxy.RouteToUser || info.Proxy.Async {
		t.Fatalf("described %+v", info.Proxy)
	}
}

func TestInvalidDefinitionsAreRefusedOnce(t *testing.T) {
	rt, _, _, cfg, _ := newRuntime(t)
	bad, _ := cfg.Agent("bad")
	err := rt.Validate(bad)
	if err == nil || err != rt.Validate(bad) { // parsed once: the same error, not a new parse
		t.Fatalf("validate %v", err)
	}
	if st := rt.Status(bad); st.State != "unconfigured" || st.Detail == "" {
		t.Fatalf("status %+v", st)
	}
	out := rt.Run(context.Background(), &turn.Turn{ID: "t_1", SessionID: "s1"}, store.Session{ID: "s1", AgentID: "bad"}, bad)
	if out.Fail == nil || out.Fail.Code != "proxy_invalid" {
		t.Fatalf("run %+v", out.Fail)
	}
	var patterns []string
	for _, r := range rt.Routes() {
		patterns = append(patterns, r.Pattern)
	}
	if strings.Join(patterns, "|") != "POST /v1/agents/{agentId}/test|POST /proxy/agents/{agentId}/sessions/{sessionId}/callback" {
		t.Fatalf("routes %v", patterns)
	}
}
