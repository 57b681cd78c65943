package service_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"

	"jarvis/internal/testwait"
)

// extPeer is a scripted external agent: it records what the service
// forwards to its inputUrl and answers as told.
type extPeer struct {
	mu      sync.Mutex
	inputs  []api.ExternalInput
	headers []http.Header
	answer  func(n int, w http.ResponseWriter, r *http.Request) // n counts requests from 1; nil: 200
	srv     *httptest.Server
}

func newExtPeer(t testing.TB, answer func(n int, w http.ResponseWriter, r *http.Request)) *extPeer {
	p := &extPeer{answer: answer}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in api.ExternalInput
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("peer: bad input: %v", err)
		}
		p.mu.Lock()
		p.inputs = append(p.inputs, in)
		p.headers = append(p.headers, r.Header.Clone())
		n := len(p.inputs)
		p.mu.Unlock()
		if p.answer != nil {
			p.answer(n, w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *extPeer) got() ([]api.ExternalInput, []http.Header) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.inputs), slices.Clone(p.headers)
}

func withExtSecrets(m map[string]string) envOpt {
	return func(e *env, o *service.Options) { o.Secrets = testpeer.NewSecrets(m) }
}

func withExtLogger(l *slog.Logger) envOpt {
	return func(e *env, o *service.Options) { o.Logger = l }
}

// newExternalEnv is the real service with a general chat agent plus the
// given agent definitions (JSON objects, comma-separated).
func newExternalEnv(t testing.TB, agents string, opts ...envOpt) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	c, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},
		"agents":[{"agentId":"general","displayName":"General"},%s]}`, e.upSrv.URL+"/v1", agents)))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = c
	e.start(opts...)
	return e
}

func extAgent(id, inputURL, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"agentId":%q,"displayName":%q,"type":"external","external":{"inputUrl":%q%s}}`, id, id, inputURL, extra)
}

// extSession creates (or attaches) a session with a user-provided id.
func (e *env) extSession(agentID, id string) string {
	e.t.Helper()
	var out api.CreateOperationResponse
	if err := e.c.Do(context.Background(), "POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: agentID, SessionID: &id}, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Result.SessionID
}

func (e *env) extCallbackURL(sid string) string {
	e.t.Helper()
	var info api.ExternalSessionInfo
	if err := e.c.Do(context.Background(), "GET", "/v1/external/sessions/"+sid, nil, &info); err != nil {
		e.t.Fatal(err)
	}
	return info.CallbackURL
}

func (e *env) extTranscript(sid string) api.Transcript {
	e.t.Helper()
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		e.t.Fatal(err)
	}
	return tr
}

func (e *env) extAgentStatus(id string) api.AgentStatus {
	e.t.Helper()
	var list api.AgentList
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &list); err != nil {
		e.t.Fatal(err)
	}
	for _, a := range list.Agents {
		if a.AgentID == id {
			return a.Status
		}
	}
	e.t.Fatalf("agent %s not listed", id)
	return api.AgentStatus{}
}

// follow collects a session's events from the start until the test ends.
func (e *env) extFollow(sid string) *collect {
	c := &collect{}
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	go e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error { c.add(ev); return nil })
	return c
}

func extWaitEvents(t testing.TB, c *collect, what string, ok func([]api.StreamEvent) bool) []api.StreamEvent {
	t.Helper()
	var evs []api.StreamEvent
	testwait.Until(t, what, 15*time.Second, func() bool { evs = c.all(); return ok(evs) })
	return evs
}

func extReplies(evs []api.StreamEvent) []api.ExternalReplyEvent {
	var out []api.ExternalReplyEvent
	for _, ev := range evs {
		if ev.Type != api.EventFinal {
			continue
		}
		var d api.ExternalReplyEvent
		if json.Unmarshal(ev.Data, &d) == nil && d.Origin == api.EventOriginExternal {
			out = append(out, d)
		}
	}
	return out
}

func extStatusEvents(evs []api.StreamEvent) []api.StatusEvent {
	var out []api.StatusEvent
	for _, ev := range evs {
		if ev.Type == api.EventStatus {
			var d api.StatusEvent
			json.Unmarshal(ev.Data, &d)
			out = append(out, d)
		}
	}
	return out
}

type extCbResult struct {
	status int
	resp   api.ExternalMessageResponse
	err    api.ErrorBody
}

// extPost posts a reply like an external agent would.
func extPost(t testing.TB, u, contentType string, body []byte, hdr map[string]string) extCbResult {
	t.Helper()
	req, err := http.NewRequest("POST", u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := extCbResult{status: resp.StatusCode}
	if resp.StatusCode == 200 {
		json.Unmarshal(b, &r.resp)
	} else {
		json.Unmarshal(b, &r.err)
	}
	return r
}

func extWithToken(u, tok string) string {
	p, _ := url.Parse(u)
	q := p.Query()
	if tok == "" {
		q.Del("token")
	} else {
		q.Set("token", tok)
	}
	p.RawQuery = q.Encode()
	return p.String()
}

func extTokenOf(u string) string {
	p, _ := url.Parse(u)
	return p.Query().Get("token")
}

func extStatusErr(err error) (int, string) {
	var se *api.StatusError
	if !errors.As(err, &se) {
		return 0, fmt.Sprint(err)
	}
	return se.Status, se.Err.Code + ": " + se.Err.Message
}

func TestExternalForwardAndReply(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL+"/v1/assistant/input", ""))
	ctx := context.Background()
	sid := e.extSession("ext", "EXTERNAL-123")
	if sid != "EXTERNAL-123" {
		t.Fatalf("session id %q", sid)
	}
	evs := e.extFollow(sid)
	r, err := e.c.Chat(ctx, sid, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Assistant.Text(); got != "Sent to external agent" {
		t.Fatalf("the forward's answer %q", got)
	}
	ins, hdrs := peer.got()
	if len(ins) != 1 {
		t.Fatalf("%d inputs", len(ins))
	}
	in := ins[0]
	if in.SessionID != sid || in.AgentID != "ext" || in.Message.Type != "user" || in.Message.Text != "hello" {
		t.Fatalf("input %+v", in)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", in.Message.CreatedAt); err != nil {
		t.Fatalf("createdAt %q: %v", in.Message.CreatedAt, err)
	}
	if !strings.HasPrefix(in.CallbackURL, e.srv.URL+"/external/sessions/EXTERNAL-123/messages?token=") || len(extTokenOf(in.CallbackURL)) < 40 {
		t.Fatalf("callbackUrl %q (service at %s)", in.CallbackURL, e.srv.URL)
	}
	if k := hdrs[0].Get("Idempotency-Key"); k != r.TurnID {
		t.Fatalf("Idempotency-Key %q, turn %s", k, r.TurnID)
	}
	if hdrs[0].Get("webhook-signature") != "" {
		t.Fatal("a forward was signed without a secret")
	}
	if n := len(e.upstream.Requests()); n != 0 {
		t.Fatalf("the model server was called %d times for an external agent", n)
	}
	got := extWaitEvents(t, evs, "the forward's final", func(evs []api.StreamEvent) bool { return slices.Contains(types(evs), api.EventFinal) })
	if want := []string{api.EventUserMessage, api.EventStatus, api.EventFinal}; !slices.Equal(types(got), want) {
		t.Fatalf("events %v, want %v", types(got), want)
	}
	if st := extStatusEvents(got); st[0].Text != "Sent to external agent" || st[0].Kind != "external.sent" || st[0].TurnID != r.TurnID {
		t.Fatalf("status %+v", st)
	}

	// The agent answers, twice, through the callback URL: raw text and JSON.
	res := extPost(t, in.CallbackURL, "text/plain", []byte("First *reply*"), nil)
	if res.status != 200 || !res.resp.OK || res.resp.MessageID == 0 || res.resp.EventID == 0 || !strings.HasPrefix(res.resp.TurnID, "xr_") {
		t.Fatalf("callback: %+v", res)
	}
	res2 := extPost(t, in.CallbackURL, "application/json; charset=utf-8", []byte(`{"text":"Second reply"}`), nil)
	if res2.status != 200 {
		t.Fatalf("json callback: %+v", res2)
	}
	got = extWaitEvents(t, evs, "two replies", func(evs []api.StreamEvent) bool { return len(extReplies(evs)) == 2 })
	reps := extReplies(got)
	if reps[0].Text != "First *reply*" || reps[1].Text != "Second reply" || reps[0].TurnID != res.resp.TurnID || reps[0].AgentID != "ext" {
		t.Fatalf("replies %+v", reps)
	}
	if id := got[len(got)-2].ID; id != strconv.FormatInt(res.resp.EventID, 10) {
		t.Fatalf("event id %s, response says %d", id, res.resp.EventID)
	}
	tr := e.extTranscript(sid)
	var roles []string
	for _, m := range tr.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"user", "assistant", "assistant"}; !slices.Equal(roles, want) {
		t.Fatalf("transcript roles %v, want %v", roles, want)
	}
	var meta map[string]any
	json.Unmarshal(tr.Messages[1].Meta, &meta)
	if meta["origin"] != "external" || meta["auth"] != "token" || tr.Messages[1].ID != res.resp.MessageID || tr.Messages[1].TurnID != res.resp.TurnID {
		t.Fatalf("stored reply %+v meta %v", tr.Messages[1], meta)
	}

	st := e.extAgentStatus("ext")
	if st.State != "ok" || st.External == nil || !st.External.LastForwardOK || st.External.LastCallbackAt == "" || st.External.LastForwardAt == "" || st.External.CallbackAuth != "token" {
		t.Fatalf("agent status %+v %+v", st, st.External)
	}

	// The session is free for the next message; the agent gets the same callback URL.
	if _, err := e.c.Chat(ctx, sid, "again"); err != nil {
		t.Fatal(err)
	}
	ins, hdrs = peer.got()
	if len(ins) != 2 || ins[1].CallbackURL != in.CallbackURL || hdrs[1].Get("Idempotency-Key") == hdrs[0].Get("Idempotency-Key") {
		t.Fatalf("second forward %+v", ins)
	}

	// The callback URL survives a restart (only its hash is stored).
	old := e.srv.URL
	e.stop()
	e.start() // on another port: the token in the URL is what must survive
	if res := extPost(t, strings.Replace(in.CallbackURL, old, e.srv.URL, 1), "", []byte("after a restart"), nil); res.status != 200 {
		t.Fatalf("after restart: %+v", res)
	}
}

func TestExternalForwardFailures(t *testing.T) {
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + down.Addr().String() + "/input"
	down.Close()
	failing := newExtPeer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Error(w, "agent exploded", http.StatusInternalServerError)
	})
	release := make(chan struct{})
	hanging := newExtPeer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	flaky := newExtPeer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	e := newExternalEnv(t, strings.Join([]string{
		extAgent("down", downURL, `"retries":1,"retryBackoffMs":10`),
		extAgent("failing", failing.srv.URL, ""),
		extAgent("hanging", hanging.srv.URL, `"timeoutSeconds":0.3`),
		extAgent("flaky", flaky.srv.URL, `"retries":2,"retryBackoffMs":10`),
	}, ","))
	ctx := context.Background()
	for _, tc := range []struct{ agent, want string }{
		{"down", "connection refused"},
		{"failing", "inputUrl answered HTTP 500: agent exploded"},
		{"hanging", "did not answer within 300ms"},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			sid := e.extSession(tc.agent, "S-"+tc.agent)
			evs := e.extFollow(sid)
			start := time.Now()
			_, err := e.c.Chat(ctx, sid, "hello")
			status, msg := extStatusErr(err)
			if status != http.StatusBadGateway || !strings.Contains(msg, "external_forward_failed") || !strings.Contains(msg, tc.want) {
				t.Fatalf("chat: %d %s", status, msg)
			}
			if tc.agent == "hanging" && time.Since(start) > 3*time.Second {
				t.Fatalf("the timeout was not applied: %s", time.Since(start))
			}
			got := extWaitEvents(t, evs, "the error", func(evs []api.StreamEvent) bool { return slices.Contains(types(evs), api.EventError) })
			if want := []string{api.EventUserMessage, api.EventStatus, api.EventStatus, api.EventError}; !slices.Equal(types(got), want) {
				t.Fatalf("events %v, want %v", types(got), want)
			}
			if st := extStatusEvents(got); st[1].Kind != "external.forward_failed" || !strings.Contains(st[1].Text, tc.want) {
				t.Fatalf("status events %+v", st)
			}
			tr := e.extTranscript(sid)
			if len(tr.Messages) != 2 || tr.Messages[1].Role != "status" || !strings.HasPrefix(tr.Messages[1].Text, "Forward to external agent failed: ") || !strings.Contains(tr.Messages[1].Text, tc.want) {
				t.Fatalf("transcript %+v", tr.Messages)
			}
			if st := e.extAgentStatus(tc.agent); st.State != "failing" || !strings.Contains(st.Detail, tc.want) || st.External.LastForwardOK {
				t.Fatalf("agent status %+v", st)
			}
			// The session is free again: the next message is forwarded (and fails), not refused with 409.
			if status, msg := extStatusErr(func() error { _, err := e.c.Chat(ctx, sid, "again"); return err }()); status != http.StatusBadGateway {
				t.Fatalf("second message: %d %s", status, msg)
			}
		})
	}
	t.Run("refused connections and 5xx are retried with one idempotency key", func(t *testing.T) {
		sid := e.extSession("flaky", "S-flaky")
		r, err := e.c.Chat(ctx, sid, "hello")
		if err != nil {
			t.Fatal(err)
		}
		_, hdrs := flaky.got()
		if len(hdrs) != 3 {
			t.Fatalf("%d attempts, want 3", len(hdrs))
		}
		for _, h := range hdrs {
			if h.Get("Idempotency-Key") != r.TurnID {
				t.Fatalf("Idempotency-Key %q, want %s", h.Get("Idempotency-Key"), r.TurnID)
			}
		}
		if st := e.extAgentStatus("flaky"); st.State != "ok" || !strings.Contains(st.Detail, "after 2 retries") {
			t.Fatalf("status %+v", st)
		}
	})
	// A failing status is not an unconfigured one; a hanging agent kept no turn open.
	if st := e.extAgentStatus("general"); st.State == "" {
		t.Fatal("general agent has no status")
	}
}

func TestExternalCallbackRejections(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL, `"maxMessageBytes":1000`))
	a, b, d := e.extSession("ext", "A-1"), e.extSession("ext", "B-1"), e.extSession("ext", "D-1")
	chat := e.extSession("general", "CHAT-1")
	urlA, urlB, urlD := e.extCallbackURL(a), e.extCallbackURL(b), e.extCallbackURL(d)
	if urlA == urlB || extTokenOf(urlA) == extTokenOf(urlB) {
		t.Fatal("two sessions share a callback secret")
	}
	if again := e.extCallbackURL(a); again != urlA {
		t.Fatalf("the callback URL changed: %s then %s", urlA, again)
	}
	if err := e.c.Do(context.Background(), "DELETE", "/v1/sessions/"+d, nil, nil); err != nil {
		t.Fatal(err)
	}
	base := e.srv.URL + "/external/sessions/"
	big := bytes.Repeat([]byte("x"), 1001)
	for _, tc := range []struct {
		name   string
		url    string
		ct     string
		body   []byte
		hdr    map[string]string
		status int
		code   string
	}{
		{"no token", extWithToken(urlA, ""), "text/plain", []byte("hi"), nil, 401, "unauthorized"},
		{"wrong token", extWithToken(urlA, "xcb_guessed"), "text/plain", []byte("hi"), nil, 401, "unauthorized"},
		{"token of another session", extWithToken(urlA, extTokenOf(urlB)), "text/plain", []byte("hi"), nil, 401, "unauthorized"},
		{"unknown session", extWithToken(base+"NOPE/messages", extTokenOf(urlA)), "text/plain", []byte("hi"), nil, 404, "session_not_found"},
		{"deleted session", urlD, "text/plain", []byte("hi"), nil, 404, "session_not_found"},
		{"not an external session", extWithToken(base+chat+"/messages", extTokenOf(urlA)), "text/plain", []byte("hi"), nil, 404, "not_external_session"},
		{"oversized body", urlA, "text/plain", big, nil, 413, "body_too_large"},
		{"empty body", urlA, "text/plain", []byte(" \n"), nil, 400, "empty_message"},
		{"bad JSON", urlA, "application/json", []byte(`{"text":`), nil, 400, "invalid_json"},
		{"foreign Host", urlA, "text/plain", []byte("hi"), map[string]string{"Host": "evil.example:80"}, 403, "forbidden_host"},
		{"foreign Origin", urlA, "text/plain", []byte("hi"), map[string]string{"Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"signature without a secret", extWithToken(urlA, ""), "text/plain", []byte("hi"), map[string]string{"webhook-id": "m1", "webhook-timestamp": strconv.FormatInt(time.Now().Unix(), 10), "webhook-signature": "v1,AAAA"}, 401, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := extPost(t, tc.url, tc.ct, tc.body, tc.hdr)
			if r.status != tc.status || r.err.Error.Code != tc.code {
				t.Fatalf("got %d %+v, want %d %s", r.status, r.err, tc.status, tc.code)
			}
		})
	}
	if tr := e.extTranscript(a); len(tr.Messages) != 0 {
		t.Fatalf("refused callbacks stored messages: %+v", tr.Messages)
	}
	// A body exactly at the cap is accepted.
	if r := extPost(t, urlA, "text/plain", big[:1000], nil); r.status != 200 {
		t.Fatalf("1000 bytes: %+v", r)
	}

	t.Run("NUL bytes and invalid UTF-8 are removed and recorded", func(t *testing.T) {
		evs := e.extFollow(b)
		r := extPost(t, urlB, "text/plain", []byte("a\x00b\xffc\x00 ok ✓"), nil)
		if r.status != 200 || !r.resp.Sanitized {
			t.Fatalf("%+v", r)
		}
		r2 := extPost(t, urlB, "application/json", []byte(`{"text":"x\u0000y"}`), nil)
		if r2.status != 200 || !r2.resp.Sanitized {
			t.Fatalf("json: %+v", r2)
		}
		got := extReplies(extWaitEvents(t, evs, "replies", func(evs []api.StreamEvent) bool { return len(extReplies(evs)) == 2 }))
		if got[0].Text != "abc ok ✓" || got[1].Text != "xy" {
			t.Fatalf("published %+v", got)
		}
		tr := e.extTranscript(b)
		var meta struct {
			Sanitized struct {
				InvalidUTF8Bytes int `json:"invalidUtf8Bytes"`
				NULBytes         int `json:"nulBytes"`
			} `json:"sanitized"`
		}
		json.Unmarshal(tr.Messages[0].Meta, &meta)
		if tr.Messages[0].Text != "abc ok ✓" || meta.Sanitized.InvalidUTF8Bytes != 1 || meta.Sanitized.NULBytes != 2 {
			t.Fatalf("stored %q meta %s", tr.Messages[0].Text, tr.Messages[0].Meta)
		}
		audits, err := e.svc.Store().ExternalAudits(context.Background(), b)
		if err != nil || len(audits) != 2 || audits[0].Sanitized != `{"invalidUtf8Bytes":1,"nulBytes":2}` || !audits[0].Accepted || audits[0].Auth != "token" || audits[0].MessageID != tr.Messages[0].ID {
			t.Fatalf("audit %+v %v", audits, err)
		}
	})

	t.Run("audit records every attempt", func(t *testing.T) {
		audits, err := e.svc.Store().ExternalAudits(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for _, au := range audits {
			reasons = append(reasons, fmt.Sprintf("%s/%v/%s", au.Auth, au.Accepted, au.Reason))
		}
		// Host and Origin refusals happen before any handler; every other attempt on A is recorded.
		want := []string{"failed/false/no token", "failed/false/wrong token", "failed/false/wrong token", "token/false/body too large",
			"token/false/empty message", "token/false/invalid json", "failed/false/signature without a configured secret", "token/true/"}
		if !slices.Equal(reasons, want) {
			t.Fatalf("audit of A:\n got %q\nwant %q", reasons, want)
		}
		if audits[3].Bytes != 1001 || audits[7].Bytes != 1000 {
			t.Fatalf("sizes %d %d", audits[3].Bytes, audits[7].Bytes)
		}
		unknown, _ := e.svc.Store().ExternalAudits(context.Background(), "NOPE")
		if len(unknown) != 1 || unknown[0].Reason != "unknown session" {
			t.Fatalf("audit of an unknown session %+v", unknown)
		}
	})

	t.Run("a revived session does not accept its old URL", func(t *testing.T) {
		if again := e.extSession("ext", "D-1"); again != d {
			t.Fatal(again)
		}
		if r := extPost(t, urlD, "text/plain", []byte("late"), nil); r.status != 401 {
			t.Fatalf("old URL after revival: %+v", r)
		}
		fresh := e.extCallbackURL(d)
		if fresh == urlD {
			t.Fatal("a revived session was handed its old secret")
		}
		if r := extPost(t, fresh, "text/plain", []byte("new"), nil); r.status != 200 {
			t.Fatalf("new URL: %+v", r)
		}
	})
}

func TestExternalCallbackAuthNone(t *testing.T) {
	var logs extSyncBuffer
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("open", peer.srv.URL, `"callbackAuth":"none"`)+","+extAgent("closed", peer.srv.URL, ""),
		withExtLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "unauthenticated callbacks") || !strings.Contains(out, "agent=open") || strings.Contains(out, "agent=closed") {
		t.Fatalf("startup log:\n%s", out)
	}
	sid := e.extSession("open", "OPEN-1")
	r := extPost(t, e.srv.URL+"/external/sessions/OPEN-1/messages", "", []byte("anyone may post"), nil)
	if r.status != 200 {
		t.Fatalf("%+v", r)
	}
	tr := e.extTranscript(sid)
	if len(tr.Messages) != 1 || !strings.Contains(string(tr.Messages[0].Meta), `"auth":"none"`) {
		t.Fatalf("%+v", tr.Messages)
	}
	if out := logs.String(); !strings.Contains(out, `msg="external message"`) || !strings.Contains(out, "auth=none") || strings.Contains(out, "anyone may post") {
		t.Fatalf("audit log:\n%s", out)
	}
	if st := e.extAgentStatus("open"); st.External.CallbackAuth != "none" {
		t.Fatalf("%+v", st.External)
	}
	e.extSession("closed", "CLOSED-1")
	if r := extPost(t, e.srv.URL+"/external/sessions/CLOSED-1/messages", "", []byte("x"), nil); r.status != 401 {
		t.Fatalf("closed agent: %+v", r)
	}
}

type extSyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *extSyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *extSyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestExternalConcurrentCallbacks(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL, ""))
	sid := e.extSession("ext", "BUSY-1")
	u := e.extCallbackURL(sid)
	evs := e.extFollow(sid)
	const n = 50
	var wg sync.WaitGroup
	var failures atomic.Int32
	start := make(chan struct{})
	eventOf := make([]int64, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := extPost(t, u, "text/plain", []byte(fmt.Sprintf("reply %02d", i)), nil)
			if r.status != 200 {
				failures.Add(1)
				return
			}
			eventOf[i] = r.resp.EventID
		}()
	}
	close(start)
	wg.Wait()
	if f := failures.Load(); f != 0 {
		t.Fatalf("%d callbacks failed", f)
	}
	// A last reply posted once all 50 were answered is published after
	// every event they caused: once it is seen, nothing of theirs can come.
	if r := extPost(t, u, "text/plain", []byte("the end"), nil); r.status != 200 {
		t.Fatalf("last reply: %+v", r)
	}
	extWaitEvents(t, evs, "the last reply", func(evs []api.StreamEvent) bool {
		rs := extReplies(evs)
		return len(rs) > 0 && rs[len(rs)-1].Text == "the end"
	})
	got := extReplies(evs.all())
	got = got[:len(got)-1] // the last reply
	if len(got) != n {
		t.Fatalf("%d replies published, want %d", len(got), n)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.Text] {
			t.Fatalf("%q published twice", r.Text)
		}
		seen[r.Text] = true
	}
	// Stored order = published order = the order the service accepted them
	// (each response's event id tells where its reply went).
	tr := e.extTranscript(sid)
	if len(tr.Messages) != n+1 {
		t.Fatalf("%d stored, want %d and the last reply", len(tr.Messages), n)
	}
	for i, m := range tr.Messages[:n] {
		if m.Text != got[i].Text {
			t.Fatalf("stored #%d %q, published %q", i, m.Text, got[i].Text)
		}
	}
	byEvent := map[int64]string{}
	for i, id := range eventOf {
		byEvent[id] = fmt.Sprintf("reply %02d", i)
	}
	for _, ev := range evs.all() {
		id, _ := strconv.ParseInt(ev.ID, 10, 64)
		if want, ok := byEvent[id]; ok {
			var d api.ExternalReplyEvent
			json.Unmarshal(ev.Data, &d)
			if d.Text != want {
				t.Fatalf("event %d is %q, its POST said %q", id, d.Text, want)
			}
		}
	}
}

// extSign is an independent Standard Webhooks signer.
func extSign(secret []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s.%s.", id, ts)
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestExternalWebhookSignatures(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("signed", peer.srv.URL, `"secretRef":"echo-secret"`), withExtSecrets(map[string]string{"echo-secret": secret}))
	sid := e.extSession("signed", "SIGNED-1")
	bare := e.srv.URL + "/external/sessions/SIGNED-1/messages"
	now := time.Now().Unix()
	headers := func(id string, ts int64, body []byte, k []byte) map[string]string {
		t := strconv.FormatInt(ts, 10)
		return map[string]string{"webhook-id": id, "webhook-timestamp": t, "webhook-signature": extSign(k, id, t, body)}
	}
	body := []byte("signed *reply*")
	flipped := bytes.Clone(body)
	flipped[3] ^= 0x01
	without := func(h map[string]string, k string) map[string]string { h = extCloneHdr(h); delete(h, k); return h }
	for _, tc := range []struct {
		name   string
		body   []byte
		hdr    map[string]string
		status int
	}{
		{"good", body, headers("msg_1", now, body, key), 200},
		{"flipped byte", flipped, headers("msg_2", now, body, key), 401},
		{"wrong secret", body, headers("msg_3", now, body, []byte("another secret")), 401},
		{"missing signature", body, without(headers("msg_4", now, body, key), "webhook-signature"), 401},
		{"missing timestamp", body, without(headers("msg_5", now, body, key), "webhook-timestamp"), 401},
		{"missing id", body, without(headers("msg_6", now, body, key), "webhook-id"), 401},
		// Half a minute either side of the 5-minute window: the receiver
		// reads its clock later than now was taken, so "301 s ahead" was
		// let in whenever a second began in between (seen in CI-like
		// runs). The exact edge is webhook's TestVerify, on a fixed clock.
		{"timestamp 330 s old", body, headers("msg_7", now-330, body, key), 401},
		{"timestamp 330 s ahead", body, headers("msg_8", now+330, body, key), 401},
		{"timestamp 270 s old", body, headers("msg_9", now-270, body, key), 200},
		{"several signatures, one good", body, func() map[string]string {
			h := headers("msg_10", now, body, key)
			h["webhook-signature"] = "v1,bm9wZQ== " + h["webhook-signature"]
			return h
		}(), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := extPost(t, bare, "text/markdown", tc.body, tc.hdr); r.status != tc.status {
				t.Fatalf("got %d %+v, want %d", r.status, r.err, tc.status)
			}
		})
	}
	if tr := e.extTranscript(sid); len(tr.Messages) != 3 || !strings.Contains(string(tr.Messages[0].Meta), `"auth":"signature"`) {
		t.Fatalf("stored %+v", tr.Messages)
	}

	t.Run("replay", func(t *testing.T) {
		before := e.extTranscript(sid)
		h := headers("msg_1", now, body, key) // the first delivery, again
		r := extPost(t, bare, "text/markdown", body, h)
		if r.status != 200 || !r.resp.Duplicate || r.resp.MessageID != 0 {
			t.Fatalf("replay: %+v", r)
		}
		after := e.extTranscript(sid)
		if len(after.Messages) != len(before.Messages) || after.LastEventID != before.LastEventID {
			t.Fatalf("a replay added something: %d→%d messages, events %d→%d", len(before.Messages), len(after.Messages), before.LastEventID, after.LastEventID)
		}
		// The same with the token URL and an Idempotency-Key.
		u := e.extCallbackURL(sid)
		k := map[string]string{"Idempotency-Key": "reply-42"}
		if r := extPost(t, u, "text/plain", []byte("once"), k); r.status != 200 || r.resp.Duplicate {
			t.Fatalf("first: %+v", r)
		}
		if r := extPost(t, u, "text/plain", []byte("once"), k); r.status != 200 || !r.resp.Duplicate {
			t.Fatalf("second: %+v", r)
		}
		if n := len(e.extTranscript(sid).Messages); n != len(before.Messages)+1 {
			t.Fatalf("%d messages", n)
		}
	})

	t.Run("a bad signature is refused even with a good token", func(t *testing.T) {
		u := e.extCallbackURL(sid)
		if r := extPost(t, u, "text/plain", flipped, headers("msg_11", now, body, key)); r.status != 401 {
			t.Fatalf("%+v", r)
		}
	})

	t.Run("forwards are signed", func(t *testing.T) {
		if _, err := e.c.Chat(context.Background(), sid, "hello"); err != nil {
			t.Fatal(err)
		}
		_, hdrs := peer.got()
		h := hdrs[0]
		ins, _ := peer.got()
		b, _ := json.Marshal(ins[0])
		if h.Get("webhook-id") == "" || h.Get("webhook-id") != h.Get("Idempotency-Key") {
			t.Fatalf("headers %v", h)
		}
		if want := extSign(key, h.Get("webhook-id"), h.Get("webhook-timestamp"), b); h.Get("webhook-signature") != want {
			t.Fatalf("signature %q, want %q", h.Get("webhook-signature"), want)
		}
	})
}

func extCloneHdr(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestExternalEchoAgent runs the example agent as a real subprocess through
// a full exchange, then posts the seed's curl heredoc to the callback URL.
func TestExternalEchoAgent(t *testing.T) {
	bin, err := proc.Build(t.TempDir(), "jarvis/examples/external-echo")
	if err != nil {
		t.Fatal(err)
	}
	echo, err := proc.Start(bin, []string{"-addr", "127.0.0.1:0", "-delay", "50ms", "-replies", "3"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Stop() })
	if !strings.HasPrefix(echo.Line, "external-echo listening on ") {
		t.Fatalf("listening line %q", echo.Line)
	}
	agentURL := echo.URL
	e := newExternalEnv(t, extAgent("echo", agentURL+"/", ""))
	sid := e.extSession("echo", "EXTERNAL-123")
	evs := e.extFollow(sid)
	if _, err := e.c.Chat(context.Background(), sid, "hello *world*"); err != nil {
		t.Fatal(err)
	}
	got := extReplies(extWaitEvents(t, evs, "3 replies", func(evs []api.StreamEvent) bool { return len(extReplies(evs)) == 3 }))
	if !strings.Contains(got[0].Text, "> hello *world*") || !strings.Contains(got[1].Text, "- words: 2") || !strings.Contains(got[2].Text, "_Done_") {
		t.Fatalf("replies %+v", got)
	}
	tr := e.extTranscript(sid)
	if len(tr.Messages) != 4 || tr.Messages[0].Role != "user" || tr.Messages[3].Text != got[2].Text {
		t.Fatalf("transcript %+v", tr.Messages)
	}
	if !strings.Contains(string(tr.Messages[1].Meta), `"deliveryId":"msg_`) {
		t.Fatalf("the agent's webhook-id was not recorded: %s", tr.Messages[1].Meta)
	}
	if st := e.extAgentStatus("echo"); st.State != "ok" || st.External.LastCallbackAt == "" {
		t.Fatalf("status %+v %+v", st, st.External)
	}

	t.Run("the seed's curl heredoc", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed: skipping the seed's curl example")
		}
		cb := e.extCallbackURL(sid)
		script := fmt.Sprintf(`curl -sS -X POST \
  "%s" \
  --data-binary @- <<'MSG'
Here is a *Markdown* reply.

- One
- Two
MSG
`, cb)
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"ok":true`) {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		want := "Here is a *Markdown* reply.\n\n- One\n- Two\n"
		got := extReplies(extWaitEvents(t, evs, "the curl reply", func(evs []api.StreamEvent) bool { return len(extReplies(evs)) == 4 }))
		if got[3].Text != want {
			t.Fatalf("published %q, want %q", got[3].Text, want)
		}
		tr := e.extTranscript(sid)
		if m := tr.Messages[len(tr.Messages)-1]; m.Role != "assistant" || m.Text != want {
			t.Fatalf("stored %+v", m)
		}
		// The same curl with a guessed token is refused.
		bad := strings.Replace(script, extTokenOf(cb), "xcb_guessed", 1)
		bad = strings.Replace(bad, "curl -sS", `curl -sS -o /dev/null -w "%{http_code}"`, 1)
		if out, _ := exec.Command("bash", "-c", bad).CombinedOutput(); strings.TrimSpace(string(out)) != "401" {
			t.Fatalf("guessed token: %s", out)
		}
	})
}

// agents_message to an external agent: sync waits for the first callback
// reply; async returns at once and the reply lands in the agent's session.
func TestExternalDelegation(t *testing.T) {
	var replied atomic.Int32
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in api.ExternalInput
		json.NewDecoder(r.Body).Decode(&in)
		w.WriteHeader(http.StatusAccepted)
		go func() {
			time.Sleep(100 * time.Millisecond)
			for i := 1; i <= 2; i++ {
				resp, err := http.Post(in.CallbackURL, "text/markdown", strings.NewReader(fmt.Sprintf("answer %d to %s", i, in.Message.Text)))
				if err == nil {
					resp.Body.Close()
					replied.Add(1)
				}
			}
		}()
	}))
	defer agent.Close()
	e := newExternalEnv(t, extAgent("ext", agent.URL, ""))
	caller := e.session("j1")
	var got collect
	approve := e.approveServiceTools(caller) // the desktop's gate allows the message out
	if err := e.c.ChatStream(context.Background(), caller, `[[tool agents_message {"agentId":"ext","content":"ping"}]]`, func(ev api.StreamEvent) error { got.add(ev); approve(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	var res api.AgentsMessageResult
	for _, ev := range got.all() {
		if ev.Type == api.EventToolResult {
			if r := decode[api.ToolResult](t, ev.Data); r.Name == "agents_message" {
				if !r.OK {
					t.Fatalf("agents_message failed: %v", *r.Error)
				}
				res = decode[api.AgentsMessageResult](t, json.RawMessage(r.Result))
			}
		}
	}
	if res.Status != "complete" || res.Response != "answer 1 to ping" || res.AgentID != "ext" {
		t.Fatalf("sync result %+v", res)
	}
	got = collect{}
	if err := e.c.ChatStream(context.Background(), caller, `[[tool agents_message {"agentId":"ext","content":"later","mode":"async","session":"latest"}]]`, func(ev api.StreamEvent) error { got.add(ev); approve(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(got.all(), api.EventFinal), `"status":"started"`) {
		t.Fatalf("async: %s", text(got.all(), api.EventFinal))
	}
	extWaitEvents(t, e.extFollow(res.SessionID), "the async replies", func(evs []api.StreamEvent) bool {
		r := extReplies(evs)
		return len(r) == 4 && r[3].Text == "answer 2 to later"
	})
}
