package service_test

import (
	"net/http"
	"testing"

	"jarvis/service"
	"jarvis/service/config"
)

// An agent with apiExposed: false cannot be started or continued through the
// HTTP API by other programs; the window's own in-process service
// (Options.Window) can use it.
func TestAPIExposedFalseIsEnforced(t *testing.T) {
	cfgFor := func(e *env) {
		c, err := config.Parse("test.json", []byte(`{"defaultProvider":"openai-compatible",
			"providers":{"openai-compatible":{"baseUrl":"`+e.upSrv.URL+`/v1","model":"test-model"}},"upstreamTimeoutSeconds":10,
			"agents":[{"agentId":"general","displayName":"General"},{"agentId":"private","displayName":"Private","apiExposed":false}]}`))
		if err != nil {
			t.Fatal(err)
		}
		e.cfg = c
	}
	window := func(e *env, o *service.Options) { o.Window = true }

	// The window creates a session of the private agent and talks to it.
	e := newEnv(t)
	cfgFor(e)
	e.stop()
	e.start(window)
	code, _, _ := raw(t, "POST", e.srv.URL+"/v1/sessions", testToken, `{"jarvis_session_id":"w1","agent_id":"private"}`, nil)
	if code != http.StatusCreated {
		t.Fatalf("window: POST /v1/sessions = %d", code)
	}
	sid := e.session("w1")
	if code, eb, _ := raw(t, "POST", e.srv.URL+"/v1/chat", testToken, `{"general_session_id":"`+sid+`","message":{"parts":[{"type":"text","text":"hi"}]}}`, nil); code != http.StatusOK {
		t.Fatalf("window: POST /v1/chat = %d %+v", code, eb)
	}

	// Another program, through the headless service: every route that starts
	// or continues a conversation with it is refused.
	e.stop()
	e.start()
	for _, c := range []struct{ path, body string }{
		{"/v1/sessions", `{"jarvis_session_id":"api1","agent_id":"private"}`},
		{"/v1/sessions", `{"jarvis_session_id":"w1","agent_id":"private"}`},
		{"/v1/sessions", `{"jarvis_session_id":"x","preferred_session_id":"` + sid + `"}`},
		{"/v1/chat", `{"general_session_id":"` + sid + `","message":{"parts":[{"type":"text","text":"hi"}]}}`},
		{"/v1/chat", `{"general_session_id":"` + sid + `","stream":true,"message":{"parts":[{"type":"text","text":"hi"}]}}`},
		{"/api/plugins/sessions/operations/create", `{"agentId":"private"}`},
		{"/api/plugins/sessions/operations/create", `{"agentId":"private","sessionId":"` + sid + `"}`},
		{"/v1/agents/private/session", ``},
	} {
		code, eb, _ := raw(t, "POST", e.srv.URL+c.path, testToken, c.body, nil)
		if code != http.StatusForbidden || eb.Error.Code != "agent_not_exposed" {
			t.Errorf("POST %s %s = %d %+v, want 403 agent_not_exposed", c.path, c.body, code, eb.Error)
		}
	}
	// Other agents are not affected.
	if code, eb, _ := raw(t, "POST", e.srv.URL+"/v1/sessions", testToken, `{"jarvis_session_id":"g1","agent_id":"general"}`, nil); code != http.StatusCreated {
		t.Fatalf("general: %d %+v", code, eb)
	}
}
