package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"jarvis/service/config"
	"jarvis/service/proxy"
	"jarvis/service/proxy/proxytest"
	"jarvis/service/store"
)

// TestCallProxy drives callProxy, the entry point of agents_message
// delegation to proxy agents, against the scripted agent through the real
// service (async callbacks come back over HTTP).
func TestCallProxy(t *testing.T) {
	pa := &proxytest.Agent{}
	asrv := httptest.NewServer(pa.Handler())
	t.Cleanup(func() { asrv.Close(); pa.Close() })
	s, srv := serve(t, fmt.Sprintf(`{"agents":[{"agentId":"general"},
		{"agentId":"px-sync","type":"proxy","proxy":{"url":%q}},
		{"agentId":"px-async","type":"proxy","proxy":{"url":%q,"async":true,"timeoutSeconds":5}},
		{"agentId":"px-down","type":"proxy","proxy":{"url":%q}}]}`, asrv.URL+"/sync", asrv.URL+"/async", asrv.URL+"/status/500"), "tok")
	// Any request teaches the service its address (for callback URLs).
	if res, err := http.Get(srv.URL + "/health"); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	sess, err := s.st.CreateSession(context.Background(), store.Session{ID: "g_supervisor", AgentID: "general"})
	if err != nil {
		t.Fatal(err)
	}
	agent := func(id string) config.Agent { a, _ := s.cfg().Agent(id); return a }

	for _, id := range []string{"px-sync", "px-async"} {
		out, err := s.callProxy(context.Background(), agent(id), sess.ID, "delegated")
		if err != nil || out != "echo: delegated" {
			t.Fatalf("%s: %q %v", id, out, err)
		}
	}
	req := pa.Requests()[1]
	if !strings.Contains(string(req.Body), `"value":"g_supervisor"`) || !strings.Contains(string(req.Body), "/proxy/agents/px-async/sessions/g_supervisor/callback?") {
		t.Fatalf("async request %s", req.Body)
	}
	_, err = s.callProxy(context.Background(), agent("px-down"), sess.ID, "x")
	var se *proxy.ErrStatus
	if !errors.As(err, &se) || se.Code != 500 || proxyErrorCode(err) != "proxy_status" || !strings.Contains(err.Error(), `"px-down"`) {
		t.Fatalf("failing agent: %v (code %s)", err, proxyErrorCode(err))
	}
	if _, err := s.callProxy(context.Background(), agent("general"), sess.ID, "x"); !errors.Is(err, proxy.ErrInvalid) {
		t.Fatalf("chat agent: %v", err)
	}
	if s.proxyRouteToUser(agent("px-sync")) {
		t.Fatal("routeToUser defaults to off")
	}
	// Delegation publishes nothing on the supervisor's stream.
	if n, _ := s.hub.LastSeq(context.Background(), sess.ID); n != 0 {
		t.Fatalf("%d events published on the supervisor's session", n)
	}
}
