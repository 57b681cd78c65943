package service_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/service"
	"jarvis/service/proxy/proxytest"
)

// Proxy agents' callback secrets are kept as external agents' are: a token
// per call, only its hash stored, expiring; and no callback lands in a
// session or a call the agent was never given, whatever its authentication.
func TestProxyCallbackTokensArePerCallHashedAndExpiring(t *testing.T) {
	var skew atomic.Int64
	clock := func(_ *env, o *service.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	}
	e, pa := newProxyEnv(t, &proxytest.Agent{}, []string{
		proxyAgent("as", `{"url":"AGENT/async","async":true,"routeToUser":true,"timeoutSeconds":10}`),
		proxyAgent("open", `{"url":"AGENT/async","async":true,"routeToUser":true,"timeoutSeconds":10,"callbackAuth":"none"}`),
	}, clock)
	sid := e.agentSession("as")
	e.chat(sid, "one")
	e.chat(sid, "two")
	var calls []*url.URL
	for _, r := range pa.Requests() {
		u, err := url.Parse(agentRequest(t, r).CallbackURL)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, u)
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	tok1, tok2 := calls[0].Query().Get("token"), calls[1].Query().Get("token")
	call2 := calls[1].Query().Get("call")
	if tok1 == "" || tok1 == tok2 || call2 == "" {
		t.Fatalf("tokens %q and %q for two calls (call %q): want one per call", tok1, tok2, call2)
	}
	body := `{"output":[{"type":"text","content":"forged"}],"sessionInfo":{"output":{"type":"text","content":"forged"}}}`
	// One call's token does not answer another call.
	if code, eb, _ := raw(t, http.MethodPost, e.srv.URL+calls[0].Path+"?token="+url.QueryEscape(tok1)+"&call="+url.QueryEscape(call2), "", body, nil); code != http.StatusUnauthorized {
		t.Errorf("call 1's token for call 2: %d %+v, want 401", code, eb)
	}
	// Only hashes are at rest.
	files := dataDirBytes(e.dir)
	for _, tok := range []string{tok1, tok2} {
		if bytes.Contains(files.Bytes(), []byte(tok)) {
			t.Errorf("callback token %s is stored in the data dir", tok)
		}
	}
	// A token expires.
	skew.Store(int64(2 * time.Hour))
	if code, eb, _ := raw(t, http.MethodPost, e.srv.URL+calls[0].Path+"?"+calls[0].RawQuery, "", body, nil); code != http.StatusUnauthorized {
		t.Errorf("an expired token: %d %+v, want 401", code, eb)
	}
	skew.Store(0)
	// Unauthenticated callbacks (callbackAuth none) only for calls the agent was given.
	gs := e.session("g")
	osid := e.agentSession("open")
	for name, target := range map[string]string{
		"a chat session":            "/proxy/agents/open/sessions/" + gs + "/callback?call=pc_x",
		"its session, no call":      "/proxy/agents/open/sessions/" + osid + "/callback",
		"its session, made-up call": "/proxy/agents/open/sessions/" + osid + "/callback?call=pc_x",
		"another agent's call":      "/proxy/agents/open/sessions/" + sid + "/callback?call=" + url.QueryEscape(call2),
	} {
		code, eb, _ := raw(t, http.MethodPost, e.srv.URL+target, "", body, nil)
		if code != http.StatusNotFound || eb.Error.Code != "proxy_call_not_found" {
			t.Errorf("%s: %d %+v, want 404 proxy_call_not_found", name, code, eb)
		}
	}
	for _, s := range []string{sid, gs, osid} {
		for _, m := range e.transcript(s) {
			if strings.Contains(m.Text, "forged") {
				t.Fatalf("a refused callback was recorded in %s: %+v", s, m)
			}
		}
	}
}
