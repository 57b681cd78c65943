package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/proxy"
	"jarvis/service/proxy/proxytest"
)

// mapSecrets is a keyring stand-in for proxy header and webhook secrets.
type mapSecrets map[string]string

func (m mapSecrets) Get(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q not found", ref)
}

func withSecrets(m mapSecrets) envOpt {
	return func(e *env, o *service.Options) { o.Secrets = m }
}

// proxyAgent is the config entry of a proxy agent; AGENT in def stands for
// the scripted agent's base URL.
func proxyAgent(id, def string) string {
	return fmt.Sprintf(`{"agentId":%q,"displayName":%q,"type":"proxy","proxy":%s}`, id, "Agent "+id, def)
}

// newProxyEnv is the real service with the given proxy agents, in front of
// the scripted Agent Protocol agent pa (a new one when nil).
func newProxyEnv(t *testing.T, pa *proxytest.Agent, agents []string, opts ...envOpt) (*env, *proxytest.Agent) {
	t.Helper()
	if pa == nil {
		pa = &proxytest.Agent{}
	}
	asrv := httptest.NewServer(pa.Handler())
	t.Cleanup(func() { asrv.Close(); pa.Close() })
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	js := strings.ReplaceAll(strings.Join(agents, ","), "AGENT", asrv.URL)
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},
		"agents":[{"agentId":"general","displayName":"General"},%s]}`, e.upSrv.URL+"/v1", js)))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.start(opts...)
	return e, pa
}

func (e *env) agentSession(agentID string) string {
	e.t.Helper()
	r, err := e.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j-" + agentID + "-" + strconv.Itoa(int(time.Now().UnixNano())), AgentID: agentID})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.GeneralSessionID
}

func (e *env) chat(sid, msg string) []api.StreamEvent {
	e.t.Helper()
	var got collect
	if err := e.c.ChatStream(context.Background(), sid, msg, func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		e.t.Fatal(err)
	}
	return got.all()
}

func (e *env) transcript(sid string) []api.TranscriptMessage {
	e.t.Helper()
	var tr api.Transcript
	if err := e.c.Do(context.Background(), http.MethodGet, "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		e.t.Fatal(err)
	}
	return tr.Messages
}

func (e *env) agentInfo(id string) api.AgentInfo {
	e.t.Helper()
	var l api.AgentList
	if err := e.c.Do(context.Background(), http.MethodGet, "/v1/agents", nil, &l); err != nil {
		e.t.Fatal(err)
	}
	for _, a := range l.Agents {
		if a.AgentID == id {
			return a
		}
	}
	e.t.Fatalf("agent %s not listed", id)
	return api.AgentInfo{}
}

func statuses(evs []api.StreamEvent, kind string) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == api.EventStatus {
			var s api.StatusEvent
			json.Unmarshal(ev.Data, &s)
			if s.Kind == kind {
				out = append(out, s.Text)
			}
		}
	}
	return out
}

func lastError(t *testing.T, evs []api.StreamEvent) api.ErrorEvent {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != api.EventError {
		t.Fatalf("events %v do not end with an error", types(evs))
	}
	return decode[api.ErrorEvent](t, evs[len(evs)-1].Data)
}

func agentRequest(t *testing.T, r proxytest.Request) proxy.AgentRequest {
	t.Helper()
	var req proxy.AgentRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		t.Fatalf("request body %s: %v", r.Body, err)
	}
	return req
}

func identity(req proxy.AgentRequest, typ string) string {
	for _, id := range req.SessionIdentity {
		if id.Type == typ {
			return id.Value
		}
	}
	return ""
}

func TestProxySync(t *testing.T) {
	e, pa := newProxyEnv(t, nil, []string{
		proxyAgent("sync", `{"profile":{"name":"Echo","externalPlatform":"Acme"},"url":"AGENT/sync","headers":{"X-Api-Key":"{{secret:acme}}"},"debug":{"enable":true},"routeToUser":true,"timeoutSeconds":5}`),
	}, withSecrets(mapSecrets{"acme": "s3cret"}))
	if st := e.agentInfo("sync"); st.Status.State != "unknown" || st.Proxy == nil || st.Proxy.ExternalPlatform != "Acme" || st.Proxy.Async {
		t.Fatalf("before any call: %+v %+v", st.Status, st.Proxy)
	}
	sid := e.agentSession("sync")
	evs := e.chat(sid, "hi")
	if f := text(evs, api.EventFinal); f != "echo: hi" {
		t.Fatalf("final %q, events %v", f, types(evs))
	}
	if th := statuses(evs, "thought"); !slices.Equal(th, []string{"Analyzing the query...", "Processing data..."}) {
		t.Fatalf("thoughts %q", th)
	}
	if st := statuses(evs, "agent_status"); !slices.Equal(st, []string{"idle"}) {
		t.Fatalf("agent status events %q", st)
	}
	if len(statuses(evs, "route")) != 0 {
		t.Fatal("a route note although routeToUser is on")
	}
	// The non-streamed chat answers with the same agent.
	r, err := e.c.Chat(context.Background(), sid, "again")
	if err != nil || r.Assistant.Text() != "echo: again" {
		t.Fatalf("non-streamed chat: %+v %v", r, err)
	}

	reqs := pa.Requests()
	if len(reqs) != 2 {
		t.Fatalf("agent got %d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("X-Api-Key"); got != "s3cret" {
		t.Fatalf("secret header = %q", got)
	}
	first, second := agentRequest(t, reqs[0]), agentRequest(t, reqs[1])
	if identity(first, "sessionReference") != sid || identity(first, "userReference") == "" ||
		identity(first, "userReference") != identity(second, "userReference") || first.Debug == nil || !first.Debug.Enable {
		t.Fatalf("requests %+v / %+v", first, second)
	}
	if len(first.Input) != 1 || first.Input[0].Content != "hi" || first.CallbackURL != "" {
		t.Fatalf("input %+v callback %q", first.Input, first.CallbackURL)
	}

	msgs := e.transcript(sid)
	if len(msgs) != 4 || msgs[1].Role != "assistant" || msgs[1].Text != "echo: hi" {
		t.Fatalf("transcript %+v", msgs)
	}
	var meta struct {
		Thoughts    []string `json:"thoughts"`
		AgentStatus string   `json:"agentStatus"`
		ProxyAgent  string   `json:"proxyAgent"`
	}
	json.Unmarshal(msgs[1].Meta, &meta)
	if len(meta.Thoughts) != 2 || meta.AgentStatus != "idle" || meta.ProxyAgent != "sync" {
		t.Fatalf("meta %s", msgs[1].Meta)
	}
	if st := e.agentInfo("sync").Status; st.State != "ok" || st.At == "" {
		t.Fatalf("status after success %+v", st)
	}
}

func TestProxyStreamDeltasBeforeEnd(t *testing.T) {
	for _, path := range []string{"sse", "ndjson"} {
		t.Run(path, func(t *testing.T) {
			hold := make(chan struct{})
			e, _ := newProxyEnv(t, &proxytest.Agent{Hold: hold}, []string{
				proxyAgent("st", `{"url":"AGENT/`+path+`","stream":{"enable":true,"streamMode":"messages"},"routeToUser":true,"timeoutSeconds":10}`),
			})
			sid := e.agentSession("st")
			var got collect
			var once sync.Once
			deltas := 0
			err := e.c.ChatStream(context.Background(), sid, "streamed", func(ev api.StreamEvent) error {
				got.add(ev)
				if ev.Type == api.EventDelta {
					// The agent holds its final message until all three
					// parts have reached the user: they came while the
					// stream was still open.
					if deltas++; deltas == 3 {
						once.Do(func() { close(hold) })
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			evs := got.all()
			if evs[len(evs)-1].Type != api.EventFinal {
				t.Fatalf("events %v", types(evs))
			}
			if d, f := text(evs, api.EventDelta), text(evs, api.EventFinal); d != "echo: streamed" || f != d {
				t.Fatalf("deltas %q final %q", d, f)
			}
			if th := statuses(evs, "thought"); !slices.Equal(th, []string{"part 0", "part 1", "part 2"}) {
				t.Fatalf("thoughts %q", th)
			}
			if st := statuses(evs, "agent_status"); !slices.Equal(st, []string{"busy", "idle"}) {
				t.Fatalf("agent status %q", st)
			}
		})
	}
}

func TestProxyAsyncCallback(t *testing.T) {
	e, pa := newProxyEnv(t, &proxytest.Agent{ChunkDelay: 10 * time.Millisecond}, []string{
		proxyAgent("as", `{"url":"AGENT/async","async":true,"routeToUser":true,"timeoutSeconds":10}`),
	})
	sid := e.agentSession("as")
	evs := e.chat(sid, "later")
	if d, f := text(evs, api.EventDelta), text(evs, api.EventFinal); d != "echo: later" || f != d {
		t.Fatalf("deltas %q final %q (events %v)", d, f, types(evs))
	}
	if n := strings.Count(strings.Join(types(evs), " "), api.EventDelta); n != 3 {
		t.Fatalf("%d deltas, want one per partial callback", n)
	}
	req := agentRequest(t, pa.Requests()[0])
	prefix := e.srv.URL + "/proxy/agents/as/sessions/" + sid + "/callback?"
	if !strings.HasPrefix(req.CallbackURL, prefix) {
		t.Fatalf("callbackUrl %q, want prefix %q", req.CallbackURL, prefix)
	}
	info := e.agentInfo("as")
	if info.Status.State != "ok" || info.Proxy == nil || !strings.HasPrefix(info.Proxy.CallbackURLTemplate, e.srv.URL+"/proxy/agents/as/sessions/{sessionId}/callback") {
		t.Fatalf("agent info %+v %+v", info.Status, info.Proxy)
	}

	// Callbacks without the session's token are refused.
	u, _ := url.Parse(req.CallbackURL)
	good := u.Query().Get("token")
	other := e.agentSession("as")
	body := `{"output":[{"type":"text","content":"forged"}],"sessionInfo":{"output":{"type":"text","content":"forged"}}}`
	for name, target := range map[string]string{
		"no token":          e.srv.URL + u.Path,
		"wrong token":       e.srv.URL + u.Path + "?token=AAAA",
		"other session's":   e.srv.URL + "/proxy/agents/as/sessions/" + other + "/callback?token=" + good,
		"token, wrong case": e.srv.URL + u.Path + "?token=" + strings.ToUpper(good),
	} {
		code, eb, _ := raw(t, http.MethodPost, target, "", body, nil)
		if code != http.StatusUnauthorized || eb.Error.Code != "unauthorized" {
			t.Errorf("%s: %d %+v, want 401", name, code, eb)
		}
	}
	for _, s := range []string{sid, other} {
		for _, m := range e.transcript(s) {
			if strings.Contains(m.Text, "forged") {
				t.Fatalf("a refused callback was recorded: %+v", m)
			}
		}
	}
	// A repeated final after the answer completed is refused, not shown.
	code, eb, _ := raw(t, http.MethodPost, req.CallbackURL, "", body, nil)
	if code != http.StatusConflict || eb.Error.Code != "proxy_turn_complete" {
		t.Fatalf("callback after completion: %d %+v", code, eb)
	}
	// An answer that came within its turn is no Inbox item.
	if a := e.answers(); len(a) != 0 {
		t.Fatalf("inbox answers %+v", a)
	}
}

func TestProxyAsyncLateAnswerAfterTimeout(t *testing.T) {
	// Parts at 0.4 s and 0.8 s are shown; the third part (1.2 s) and the
	// final (1.6 s) come after the 1 s timeout.
	e, pa := newProxyEnv(t, &proxytest.Agent{ChunkDelay: 400 * time.Millisecond}, []string{
		proxyAgent("slowcb", `{"url":"AGENT/async","async":true,"routeToUser":true,"timeoutSeconds":1}`),
	})
	sid := e.agentSession("slowcb")
	start := time.Now()
	evs := e.chat(sid, "late")
	el := lastError(t, evs)
	if el.Code != "proxy_timeout" || !strings.Contains(el.Message, "did not answer in time") {
		t.Fatalf("error %+v", el)
	}
	if d := time.Since(start); d < time.Second || d > 3*time.Second {
		t.Fatalf("the turn failed after %v, want about the 1 s timeout", d)
	}
	pa.Close() // every callback has been answered
	msgs := e.transcript(sid)
	var late []api.TranscriptMessage
	for _, m := range msgs {
		if strings.Contains(string(m.Meta), `"late":true`) {
			late = append(late, m)
		}
	}
	if len(late) != 1 || late[0].Text != "echo: late" || late[0].TurnID != el.TurnID || late[0].Role != "assistant" {
		t.Fatalf("late messages %+v (transcript %+v)", late, msgs)
	}
	// The turn stays failed: no assistant.final for it, ever.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var all collect
	e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error {
		all.add(ev)
		if ev.Type == api.EventStatus && strings.Contains(string(ev.Data), `"late"`) {
			return api.ErrStopStream
		}
		return nil
	})
	for _, ev := range all.all() {
		if ev.Type == api.EventFinal {
			t.Fatalf("the timed-out turn was reopened: %v", types(all.all()))
		}
	}
	if len(statuses(all.all(), "late")) != 1 {
		t.Fatalf("no late status: %v", types(all.all()))
	}
	tr, err := e.svc.Store().Turn(context.Background(), el.TurnID)
	if err != nil || tr.Status != "failed" || tr.ErrorCode != "proxy_timeout" {
		t.Fatalf("turn %+v %v", tr, err)
	}
	if st := e.agentInfo("slowcb").Status; st.State != "failing" || !strings.Contains(st.Detail, "timed out") {
		t.Fatalf("status %+v", st)
	} // The late answer, delivered by the agent's HTTP callback after the turn
	// ended, is one Inbox item of that conversation.
	if a := e.answers(); len(a) != 1 || a[0].Body != "echo: late" || a[0].SessionID != sid || a[0].CallID == "" || a[0].Title != "Agent slowcb answered" {
		t.Fatalf("inbox answers %+v", a)
	}
}

func TestProxyErrors(t *testing.T) {
	e, pa := newProxyEnv(t, nil, []string{
		proxyAgent("malformed", `{"url":"AGENT/malformed","routeToUser":true}`),
		proxyAgent("notfound", `{"url":"AGENT/status/404","routeToUser":true}`),
		proxyAgent("unavailable", `{"url":"AGENT/status/503","routeToUser":true}`),
		proxyAgent("slow", `{"url":"AGENT/slow","routeToUser":true,"timeoutSeconds":1}`),
		proxyAgent("big", `{"url":"AGENT/big?bytes=5000","routeToUser":true,"maxResponseBytes":1000}`),
		proxyAgent("redirect", `{"url":"AGENT/redirect","routeToUser":true}`),
		proxyAgent("down", `{"url":"http://127.0.0.1:1/agent","routeToUser":true}`),
		proxyAgent("nosecret", `{"url":"AGENT/sync","headers":{"Authorization":"Bearer {{secret:missing}}"},"routeToUser":true}`),
		proxyAgent("invalid", `{"url":"ftp://example.com","routeToUser":true}`),
	})
	for _, tc := range []struct {
		agent, code, msg string
		status           int
	}{
		{"malformed", "proxy_malformed", "invalid JSON", http.StatusBadGateway},
		{"notfound", "proxy_status", "404", http.StatusBadGateway},
		{"unavailable", "proxy_status", "503", http.StatusBadGateway},
		{"slow", "proxy_timeout", "did not answer in time", http.StatusGatewayTimeout},
		{"big", "proxy_too_large", "1000-byte cap", http.StatusBadGateway},
		{"redirect", "proxy_redirect", "not followed", http.StatusBadGateway},
		{"down", "proxy_unreachable", "unreachable", http.StatusBadGateway},
		{"nosecret", "proxy_secret", "{{secret:missing}}", http.StatusBadGateway},
		{"invalid", "proxy_invalid", "url", http.StatusBadGateway},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			sid := e.agentSession(tc.agent)
			el := lastError(t, e.chat(sid, "hi"))
			if el.Code != tc.code || !strings.Contains(el.Message, tc.msg) {
				t.Fatalf("error %+v, want code %s with %q", el, tc.code, tc.msg)
			}
			// The session stays usable: the next message runs a new turn
			// (here failing the same way), and the non-streamed chat says so
			// with the same code.
			_, err := e.c.Chat(context.Background(), sid, "again")
			var se *api.StatusError
			if !errors.As(err, &se) || se.Err.Code != tc.code || se.Status != tc.status {
				t.Fatalf("second turn: %v", err)
			}
			st := e.agentInfo(tc.agent).Status
			want := "failing"
			if tc.code == "proxy_invalid" {
				want = "unconfigured"
			}
			if st.State != want || st.Detail == "" {
				t.Fatalf("status %+v, want %s", st, want)
			}
		})
	}
	if n := pa.Hits("/target"); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

func TestProxyCustomTemplateAndMapping(t *testing.T) {
	e, pa := newProxyEnv(t, nil, []string{
		proxyAgent("custom", `{"url":"AGENT/custom","routeToUser":true,
			"body":{"query":"{{input}}","conversation":"{{sessionId}}","context":{"user":"{{userId}}"}},
			"responseMapping":{"output":"data.reply.text","thoughts":"meta.reasoning","status":"meta.state"}}`),
	})
	sid := e.agentSession("custom")
	evs := e.chat(sid, `say "hi"`)
	if f := text(evs, api.EventFinal); f != `echo: say "hi"` {
		t.Fatalf("final %q events %v", f, types(evs))
	}
	if th := statuses(evs, "thought"); !slices.Equal(th, []string{"looked it up", "answered"}) {
		t.Fatalf("thoughts %q", th)
	}
	if st := statuses(evs, "agent_status"); !slices.Equal(st, []string{"done"}) {
		t.Fatalf("agent status %q", st)
	}
	var sent struct {
		Query, Conversation string
		Context             map[string]string
	}
	if err := json.Unmarshal(pa.Requests()[0].Body, &sent); err != nil || sent.Query != `say "hi"` || sent.Conversation != sid || sent.Context["user"] == "" {
		t.Fatalf("templated body %s: %v", pa.Requests()[0].Body, err)
	}
}

func TestProxyRouteToUserOff(t *testing.T) {
	e, _ := newProxyEnv(t, nil, []string{proxyAgent("sup", `{"url":"AGENT/sync"}`)})
	evs := e.chat(e.agentSession("sup"), "direct")
	if f := text(evs, api.EventFinal); f != "echo: direct" {
		t.Fatalf("final %q", f)
	}
	if r := statuses(evs, "route"); len(r) != 1 || !strings.Contains(r[0], "supervising agent") {
		t.Fatalf("route notes %q", r)
	}
	if info := e.agentInfo("sup"); info.Proxy == nil || info.Proxy.RouteToUser {
		t.Fatalf("agent info %+v", info.Proxy)
	}
}

func TestProxyTestAction(t *testing.T) {
	e, pa := newProxyEnv(t, nil, []string{
		proxyAgent("ok", `{"url":"AGENT/sync","routeToUser":true}`),
		proxyAgent("broken", `{"url":"AGENT/status/500","routeToUser":true}`),
		proxyAgent("garbled", `{"url":"AGENT/malformed","routeToUser":true}`),
		proxyAgent("cb", `{"url":"AGENT/async","async":true,"routeToUser":true}`),
		proxyAgent("tunnel", `{"url":"AGENT/sync","async":true,"callbackBaseUrl":"https://tunnel.example.com"}`),
	})
	test := func(agent string, req any) api.ProxyTestReport {
		t.Helper()
		var rep api.ProxyTestReport
		if err := e.c.Do(context.Background(), http.MethodPost, "/v1/agents/"+agent+"/test", req, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := test("ok", api.ProxyTestRequest{Text: "ping", SessionID: "s-sample", UserID: "u-sample"})
	if rep.Status != 200 || !rep.Parsed || rep.Output != "echo: ping" || !strings.Contains(rep.RawResponse, "echo: ping") || rep.LatencyMs < 0 || rep.Error != "" {
		t.Fatalf("report %+v", rep)
	}
	sent := agentRequest(t, pa.Requests()[0])
	if identity(sent, "sessionReference") != "s-sample" || identity(sent, "userReference") != "u-sample" || !strings.Contains(rep.RequestBody, "u-sample") {
		t.Fatalf("sent %+v", sent)
	}
	if st := e.agentInfo("ok").Status; st.State != "ok" {
		t.Fatalf("a successful test leaves status %+v", st)
	}

	rep = test("broken", api.ProxyTestRequest{Text: "ping"})
	if rep.Status != 500 || rep.Parsed || rep.ErrorKind != "status" || !strings.Contains(rep.RawResponse, "scripted failure 500") {
		t.Fatalf("broken report %+v", rep)
	}
	rep = test("garbled", api.ProxyTestRequest{})
	if rep.Status != 200 || rep.Parsed || rep.ErrorKind != "malformed" || rep.ParseError == "" || rep.RawResponse == "" {
		t.Fatalf("garbled report %+v", rep)
	}
	rep = test("cb", api.ProxyTestRequest{Text: "ping"})
	if !rep.Parsed || !rep.Pending || !strings.HasPrefix(rep.CallbackURL, e.srv.URL+"/proxy/agents/cb/sessions/") {
		t.Fatalf("async report %+v", rep)
	}
	pa.Close() // the test call's callbacks were accepted (and dropped)
	rep = test("tunnel", nil)
	if !rep.Pending || !strings.HasPrefix(rep.CallbackURL, "https://tunnel.example.com/proxy/agents/tunnel/sessions/test_") || !strings.Contains(rep.RequestBody, "Hello from Jarvis") {
		t.Fatalf("callbackBaseUrl report %+v", rep)
	}

	var se *api.StatusError
	if err := e.c.Do(context.Background(), http.MethodPost, "/v1/agents/general/test", api.ProxyTestRequest{}, nil); !errors.As(err, &se) || se.Err.Code != "not_a_proxy_agent" {
		t.Fatalf("chat agent: %v", err)
	}
	if err := e.c.Do(context.Background(), http.MethodPost, "/v1/agents/nobody/test", api.ProxyTestRequest{}, nil); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("unknown agent: %v", err)
	}
	if code, _, _ := raw(t, http.MethodPost, e.srv.URL+"/v1/agents/ok/test", "", `{}`, nil); code != http.StatusUnauthorized {
		t.Fatalf("test without the bearer token: %d", code)
	}
}

func TestProxyWebhookSignature(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	e, _ := newProxyEnv(t, nil, []string{
		proxyAgent("signed", `{"url":"AGENT/async","async":true,"routeToUser":true,"webhookSecretRef":"hook"}`),
	}, withSecrets(mapSecrets{"hook": "whsec_" + base64.StdEncoding.EncodeToString(key)}))
	sid := e.agentSession("signed")
	target := e.srv.URL + "/proxy/agents/signed/sessions/" + sid + "/callback"
	body := `{"messageId":"m1","sessionInfo":{"status":"idle","output":{"type":"text","content":"signed answer"}}}`
	sign := func(id string, ts time.Time, k []byte) map[string]string {
		t := strconv.FormatInt(ts.Unix(), 10)
		m := hmac.New(sha256.New, k)
		io.WriteString(m, id+"."+t+"."+body)
		return map[string]string{"webhook-id": id, "webhook-timestamp": t, "webhook-signature": "v1,bogus v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))}
	}
	post := func(h map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := post(sign("msg_1", time.Now(), []byte("wrong key"))); code != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d %s", code, b)
	}
	if code, b := post(sign("msg_1", time.Now().Add(-10*time.Minute), key)); code != http.StatusUnauthorized {
		t.Fatalf("stale timestamp: %d %s", code, b)
	}
	// No call is waiting: a signed final answer is recorded as late.
	if code, b := post(sign("msg_1", time.Now(), key)); code != http.StatusAccepted || !strings.Contains(b, `"late":true`) {
		t.Fatalf("signed: %d %s", code, b)
	}
	if code, b := post(sign("msg_1", time.Now(), key)); code != http.StatusOK || !strings.Contains(b, `"duplicate":true`) {
		t.Fatalf("replayed id: %d %s", code, b)
	}
	n := 0
	for _, m := range e.transcript(sid) {
		if m.Text == "signed answer" && strings.Contains(string(m.Meta), `"late":true`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("recorded %d times, want once", n)
	}
}
