package service_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/service/config"
)

// Every route with bad input gets the right status and the error envelope.
func TestRoutesRefuseBadInput(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	big := `{"jarvis_session_id":"` + strings.Repeat("x", 2<<20) + `"}`
	host := strings.TrimPrefix(e.srv.URL, "http://")
	port := host[strings.LastIndex(host, ":"):]
	chat := `{"general_session_id":"` + sid + `","message":{"parts":[{"type":"text","text":"hi"}]}}`
	type tc struct {
		name, method, path, token, body string
		hdr                             map[string]string
		status                          int
		code                            string
	}
	cases := []tc{
		{"health needs no token", "GET", "/health", "", "", nil, 200, ""},
		{"missing token", "POST", "/v1/sessions", "", `{"jarvis_session_id":"x"}`, nil, 401, "unauthorized"},
		{"wrong token", "POST", "/v1/sessions", "nope", `{"jarvis_session_id":"x"}`, nil, 401, "unauthorized"},
		{"wrong token on stream", "GET", "/v1/stream?general_session_id=" + sid, "nope", "", nil, 401, "unauthorized"},
		{"foreign host", "GET", "/health", "", "", map[string]string{"Host": "evil.example" + port}, 403, "forbidden_host"},
		{"rebinding host with token", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"x"}`, map[string]string{"Host": "attacker.test" + port}, 403, "forbidden_host"},
		{"host with another port", "GET", "/health", "", "", map[string]string{"Host": "127.0.0.1:1"}, 403, "forbidden_host"},
		{"localhost host", "GET", "/health", "", "", map[string]string{"Host": "localhost" + port}, 200, ""},
		{"ipv6 loopback host", "GET", "/health", "", "", map[string]string{"Host": "[::1]" + port}, 200, ""},
		{"foreign origin", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"x"}`, map[string]string{"Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"cross-site fetch", "POST", "/v1/chat", testToken, chat, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "forbidden_origin"},
		{"null origin", "POST", "/v1/chat/cancel", testToken, `{"general_session_id":"` + sid + `"}`, map[string]string{"Origin": "null"}, 403, "forbidden_origin"},
		{"same origin is fine", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"x2"}`, map[string]string{"Origin": "http://127.0.0.1" + port}, 201, ""},
		{"text/plain body", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"no content type", "POST", "/v1/chat", testToken, chat, map[string]string{"Content-Type": ""}, 415, "unsupported_media_type"},
		{"malformed json", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":`, nil, 400, "invalid_json"},
		{"wrong field type", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":5}`, nil, 400, "invalid_json"},
		{"trailing data", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"a"} {}`, nil, 400, "invalid_json"},
		{"empty body", "POST", "/v1/tools/result", testToken, ``, map[string]string{"Content-Type": "application/json"}, 400, "invalid_json"},
		{"oversized body", "POST", "/v1/sessions", testToken, big, nil, 413, "body_too_large"},
		// A chat message may carry 20 MB of attachments (service/chatrt/attach.go): its cap is higher.
		{"oversized chat", "POST", "/v1/chat", testToken, `{"general_session_id":"` + sid + `","message":{"parts":[{"type":"text","text":"` + strings.Repeat("y", 30<<20) + `"}]}}`, nil, 413, "body_too_large"},
		{"missing jarvis_session_id", "POST", "/v1/sessions", testToken, `{}`, nil, 400, "missing_field"},
		{"unknown agent", "POST", "/v1/sessions", testToken, `{"jarvis_session_id":"z","agent_id":"ghost"}`, nil, 400, "unknown_agent"},
		{"chat missing session", "POST", "/v1/chat", testToken, `{"message":{"parts":[{"type":"text","text":"hi"}]}}`, nil, 400, "missing_field"},
		{"chat missing parts", "POST", "/v1/chat", testToken, `{"general_session_id":"` + sid + `"}`, nil, 400, "missing_field"},
		{"chat empty text", "POST", "/v1/chat", testToken, `{"general_session_id":"` + sid + `","message":{"parts":[{"type":"text","text":"  "}]}}`, nil, 400, "empty_message"},
		{"chat image part", "POST", "/v1/chat", testToken, `{"general_session_id":"` + sid + `","message":{"parts":[{"type":"image","text":""}]}}`, nil, 400, "unsupported_part"},
		{"chat unknown session", "POST", "/v1/chat", testToken, `{"general_session_id":"g_nope","message":{"parts":[{"type":"text","text":"hi"}]}}`, nil, 404, "session_not_found"},
		{"stream missing session", "GET", "/v1/stream", testToken, "", nil, 400, "missing_field"},
		{"stream unknown session", "GET", "/v1/stream?general_session_id=g_nope", testToken, "", nil, 404, "session_not_found"},
		{"tool result missing id", "POST", "/v1/tools/result", testToken, `{"general_session_id":"` + sid + `","tool_result":{"ok":true}}`, nil, 400, "missing_field"},
		{"tool result unknown session", "POST", "/v1/tools/result", testToken, `{"general_session_id":"g_nope","tool_result":{"id":"x","ok":true}}`, nil, 404, "session_not_found"},
		{"tool result unknown call", "POST", "/v1/tools/result", testToken, `{"general_session_id":"` + sid + `","tool_result":{"id":"tc_x","ok":true}}`, nil, 404, "tool_call_not_found"},
		{"cancel unknown session", "POST", "/v1/chat/cancel", testToken, `{"general_session_id":"g_nope"}`, nil, 404, "session_not_found"},
		{"unknown route", "GET", "/v1/nothing", testToken, "", nil, 404, "not_found"},
		{"transcript unknown session", "GET", "/v1/sessions/g_nope/messages", testToken, "", nil, 404, "session_not_found"},
		{"rename bad attributes", "PATCH", "/v1/sessions/" + sid, testToken, `{"attributes":[1]}`, nil, 400, "invalid_field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, eb, _ := raw(t, c.method, e.srv.URL+c.path, c.token, c.body, c.hdr)
			if status != c.status {
				t.Fatalf("status %d, want %d (%+v)", status, c.status, eb)
			}
			if c.code != "" && (eb.Error.Code != c.code || eb.Error.Message == "" || eb.Error.Details == nil) {
				t.Fatalf("envelope %+v, want code %s", eb, c.code)
			}
		})
	}
	// Nothing stored was lost by all that.
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
}

func TestSessionMapping(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, err := e.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j_abc"})
	if err != nil || !a.Created || !strings.HasPrefix(a.GeneralSessionID, "g_") {
		t.Fatalf("%v %+v", err, a)
	}
	b, err := e.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j_abc"})
	if err != nil || b.GeneralSessionID != a.GeneralSessionID || b.Created {
		t.Fatalf("same jarvis id gave %+v, want %s", b, a.GeneralSessionID)
	}
	c, err := e.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j_other", PreferredSessionID: a.GeneralSessionID})
	if err != nil || c.GeneralSessionID != a.GeneralSessionID {
		t.Fatalf("preferred session not resumed: %+v", c)
	}
	d, err := e.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j_new", PreferredSessionID: "g_gone"})
	if err != nil || d.GeneralSessionID == a.GeneralSessionID || !d.Created {
		t.Fatalf("unknown preferred session: %+v", d)
	}
	// The mapping survives a restart.
	e.stop()
	e.start()
	f, err := e.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: "j_abc"})
	if err != nil || f.GeneralSessionID != a.GeneralSessionID {
		t.Fatalf("after restart %+v", f)
	}
}

func TestSessionOperations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s1, s2 := e.session("one"), e.session("two")
	if _, err := e.c.Chat(ctx, s1, "first"); err != nil {
		t.Fatal(err)
	}
	var list api.SessionList
	if err := e.c.Do(ctx, "GET", "/v1/sessions", nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 2 || list.Sessions[0].SessionID != s1 || list.Sessions[0].LastSnippet != "You said: first" || list.Sessions[0].AgentID != "general" {
		t.Fatalf("list (most recent first) %+v", list.Sessions)
	}
	name := "Weekly plan"
	var got api.SessionSummary
	if err := e.c.Do(ctx, "PATCH", "/v1/sessions/"+s2, api.UpdateSessionRequest{Name: &name}, &got); err != nil || got.Name != name {
		t.Fatalf("rename %v %+v", err, got)
	}
	if err := e.c.Do(ctx, "POST", "/v1/sessions/"+s1+"/clear", nil, &got); err != nil || got.SessionID != s1 {
		t.Fatalf("clear %v", err)
	}
	var tr api.Transcript
	if err := e.c.Do(ctx, "GET", "/v1/sessions/"+s1+"/messages", nil, &tr); err != nil || len(tr.Messages) != 0 {
		t.Fatalf("after clear: %v %+v", err, tr)
	}
	if err := e.c.Do(ctx, "DELETE", "/v1/sessions/"+s2, nil, nil); err != nil {
		t.Fatal(err)
	}
	if status, eb, _ := raw(t, "GET", e.srv.URL+"/v1/sessions/"+s2, testToken, "", nil); status != http.StatusNotFound {
		t.Fatalf("deleted session: %d %+v", status, eb)
	}
	list = api.SessionList{}
	e.c.Do(ctx, "GET", "/v1/sessions", nil, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("after delete %+v", list)
	}
}

func TestOperationsCreateWithUserProvidedID(t *testing.T) {
	e := newEnv(t)
	c := *e.cfg
	c.Agents = append([]config.Agent{}, c.Agents...)
	c.Agents = append(c.Agents, config.Agent{AgentID: "other", DisplayName: "Other", Type: "chat"})
	e.svc.SetConfig(&c)
	post := func(body string) (int, api.ErrorBody, string) {
		t.Helper()
		status, eb, _ := raw(t, "POST", e.srv.URL+"/api/plugins/sessions/operations/create", testToken, body, nil)
		return status, eb, eb.Error.Code
	}
	cases := []struct {
		body   string
		status int
		code   string
	}{
		{`{"agentId":"general","sessionId":"EXTERNAL-123"}`, 201, ""},
		{`{"agentId":"general","sessionId":"  EXTERNAL-123 "}`, 201, ""}, // trimmed, idempotent attach
		{`{"agentId":"other","sessionId":"EXTERNAL-123"}`, 409, "session_agent_mismatch"},
		{`{"agentId":"general","sessionId":""}`, 400, "invalid_session_id"},
		{`{"agentId":"general","sessionId":"has space"}`, 400, "invalid_session_id"},
		{`{"agentId":"general","sessionId":"ünï"}`, 400, "invalid_session_id"},
		{`{"agentId":"general","sessionId":"` + strings.Repeat("a", 129) + `"}`, 400, "invalid_session_id"},
		{`{"agentId":"general","sessionId":"` + strings.Repeat("a", 128) + `"}`, 201, ""},
		{`{"agentId":"ghost","sessionId":"x"}`, 400, "unknown_agent"},
		{`{"sessionId":"x"}`, 400, "missing_field"},
		{`{"agentId":"general"}`, 201, ""},
	}
	for _, tc := range cases {
		status, eb, code := post(tc.body)
		if status != tc.status || code != tc.code {
			t.Errorf("%s: %d %q (%+v), want %d %q", tc.body, status, code, eb, tc.status, tc.code)
		}
	}
	// A deleted session is revived by attaching it again.
	if err := e.c.Do(context.Background(), "DELETE", "/v1/sessions/EXTERNAL-123", nil, nil); err != nil {
		t.Fatal(err)
	}
	var res api.CreateOperationResponse
	id := "EXTERNAL-123"
	if err := e.c.Do(context.Background(), "POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "general", SessionID: &id}, &res); err != nil || !res.OK || res.Result.SessionID != id {
		t.Fatalf("revive: %v %+v", err, res)
	}
	var got api.SessionSummary
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+id, nil, &got); err != nil || got.AgentID != "general" {
		t.Fatalf("revived session: %v %+v", err, got)
	}
}
