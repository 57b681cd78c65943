package a2art_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/push"

	"jarvis/internal/testhttp"
	"jarvis/internal/testwait"
	"jarvis/service/a2art"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// twice is a2a-go's HTTP push sender, delivering each notification and then
// the same one again (an at-least-once sender's retry), the repeat's answer
// recorded.
type twice struct {
	inner   *push.HTTPPushSender
	mu      sync.Mutex
	repeats []string // "state: status body" of each repeat
}

func (s *twice) SendPush(ctx context.Context, cfg *a2a.PushConfig, task *a2a.Task) error {
	if err := s.inner.SendPush(ctx, cfg, task); err != nil {
		return err
	}
	body, _ := json.Marshal(task)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-A2A-Notification-Token", cfg.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.mu.Lock()
	s.repeats = append(s.repeats, fmt.Sprintf("%s: %d %s", task.Status.State, resp.StatusCode, bytes.TrimSpace(b)))
	s.mu.Unlock()
	return nil
}

// pushAgent serves r with a2a-go's server and the push sender given: its
// first message/stream is cut mid-task and every JSON-RPC call after that
// gets 503 (until r.reachable is called), so only a push notification can
// end the turn.
func pushAgent(t *testing.T, r *remote, sender a2asrv.PushSender) *httptest.Server {
	t.Helper()
	r.breakStream = true
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{Name: "Remote", URL: srv.URL + "/rpc", PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0",
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo"}}}
	mux.Handle("GET /.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(r, a2asrv.WithPushNotifications(push.NewInMemoryStore(), sender)))
	var down bool
	r.reachable = func() { r.mu.Lock(); down = false; r.mu.Unlock() }
	mux.Handle("POST /rpc", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var call struct{ Method string }
		_ = json.Unmarshal(body, &call)
		r.mu.Lock()
		cut := r.breakStream && call.Method == "message/stream"
		r.breakStream = r.breakStream && !cut
		refuse := down
		down = down || cut
		r.methods = append(r.methods, call.Method)
		r.mu.Unlock()
		if refuse { // the agent cannot be reached after the cut
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		if cut {
			w = &cutter{ResponseWriter: w}
		}
		rpc.ServeHTTP(w, req)
	}))
	return srv
}

// pushFixture is the runtime with settings, its push route served on a
// loopback server (the service's base URL).
func pushFixture(t *testing.T, settings string, sec secrets) (*fixture, *httptest.Server) {
	t.Helper()
	f := newFixture(t, settings)
	if sec != nil {
		f.env.Secrets = sec
	}
	jarvis := http.NewServeMux()
	js := httptest.NewServer(jarvis)
	t.Cleanup(js.Close)
	f.env.BaseURL = func() string { return js.URL }
	f.rt = a2art.New(f.env, a2art.Options{Waiter: f.waiter})
	for _, rr := range f.rt.Routes() {
		jarvis.Handle(rr.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), rr.Handle))
	}
	return f, js
}

// A task that finished while its agent could not be reached (the stream cut
// mid-task, then every JSON-RPC call refused) ends the turn through the
// agent's push notification: a2a-go's server and push sender post the task
// to Jarvis's push route with the turn's token; the reply is the task's
// whole. A delivery repeated is answered as a duplicate; a wrong token is
// refused.
func TestA2APushNotificationCompletesTheTurn(t *testing.T) {
	r := &remote{}
	sender := &twice{inner: push.NewHTTPPushSender(nil)}
	srv := pushAgent(t, r, sender)
	f, js := pushFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":30}`, srv.URL), nil)

	out, _ := f.turn(t, "count 6")
	if out.Fail != nil || out.Final != "1 2 3 4 5 6 " {
		t.Fatalf("outcome %+v, want the task's whole reply from its push notification", out)
	}
	said := false
	for _, st := range f.rec.Events() {
		said = said || strings.Contains(string(st.Data), "waiting for its push notification")
	}
	if !said {
		t.Fatal("no status line said the agent could not be reached")
	}
	sender.mu.Lock()
	repeats := append([]string(nil), sender.repeats...)
	sender.mu.Unlock()
	if len(repeats) == 0 || repeats[0] != `submitted: 200 {"duplicate":true,"ok":true}` {
		t.Fatalf("repeated deliveries answered %q, want each a duplicate", repeats)
	}
	for _, rp := range repeats {
		if !strings.Contains(rp, `"duplicate":true`) && !strings.Contains(rp, "401") { // 401: the turn had ended
			t.Fatalf("a repeated delivery was taken again: %q", rp)
		}
	}
	testhttp.Fails(t, "POST", js.URL+a2art.PushPath, `{"id":"t1","status":{"state":"completed"}}`, 401, "unauthorized")
}

// theSecret is the Standard Webhooks example secret the agent signs with;
// otherSecret is one Jarvis does not know.
const (
	theSecret   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	otherSecret = "whsec_bm90IHRoZSBhZ2VudCdzIHNlY3JldCBhdCBhbGw="
)

// signJS signs body as delivery id at ts with the npm standardwebhooks
// library (tests/conformance/testdata, installed by scripts/setup.sh) and
// returns its three headers.
func signJS(t *testing.T, secret, id string, ts int64, body []byte) map[string]string {
	t.Helper()
	dir, err := filepath.Abs("../../tests/conformance/testdata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		t.Fatalf("the npm standardwebhooks package is not installed (run scripts/setup.sh): %v", err)
	}
	in, _ := json.Marshal(map[string]any{"id": id, "timestamp": ts, "body": string(body)})
	c := exec.Command("node", filepath.Join(dir, "webhook.cjs"), "sign", secret)
	c.Stdin = bytes.NewReader(in)
	out, err := c.Output()
	if err != nil {
		t.Errorf("the reference signer failed: %v", err)
		return nil
	}
	var h map[string]string
	if err := json.Unmarshal(out, &h); err != nil {
		t.Errorf("the reference signer printed %q", out)
	}
	return h
}

// signingGateway stands between a2a-go's push sender and Jarvis, as an
// agent's webhook gateway would: it signs each delivery a2a-go posts with
// the npm standardwebhooks library and forwards it without the token, so
// the signature alone must be the check. Along with the first delivery it
// posts three forgeries of a completed task whose reply is "FORGED": one
// signed with another secret (and the turn's good token), one signed with
// the right secret 10 minutes ago, and one reusing the first delivery's
// webhook-id, freshly and correctly signed.
type signingGateway struct {
	t       *testing.T
	inner   *push.HTTPPushSender
	srv     *httptest.Server
	mu      sync.Mutex
	n       int
	answers []string // "what: status body"
}

func newSigningGateway(t *testing.T) *signingGateway {
	g := &signingGateway{t: t, inner: push.NewHTTPPushSender(nil)}
	g.srv = httptest.NewServer(http.HandlerFunc(g.relay))
	t.Cleanup(g.srv.Close)
	return g
}

// SendPush has a2a-go's sender post to the gateway, which relays.
func (g *signingGateway) SendPush(ctx context.Context, cfg *a2a.PushConfig, task *a2a.Task) error {
	via := *cfg
	via.URL = g.srv.URL + "/?to=" + url.QueryEscape(cfg.URL)
	return g.inner.SendPush(ctx, &via, task)
}

func (g *signingGateway) relay(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	to, tok := r.URL.Query().Get("to"), r.Header.Get("X-A2A-Notification-Token")
	g.mu.Lock()
	g.n++
	n := g.n
	g.mu.Unlock()
	now := time.Now().Unix()
	id := fmt.Sprintf("msg_%d", n)
	g.post("real "+id, to, body, signJS(g.t, theSecret, id, now, body), "")
	if n == 1 {
		var task a2a.Task
		_ = json.Unmarshal(body, &task)
		task.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
		task.Artifacts = []*a2a.Artifact{{ID: "forged", Parts: a2a.ContentParts{a2a.TextPart{Text: "FORGED"}}}}
		forged, _ := json.Marshal(task)
		g.post("other secret", to, forged, signJS(g.t, otherSecret, "msg_f1", now, forged), tok)
		g.post("10 minutes old", to, forged, signJS(g.t, theSecret, "msg_f2", now-600, forged), tok)
		g.post("replayed id", to, forged, signJS(g.t, theSecret, id, now, forged), "")
	}
	w.WriteHeader(http.StatusOK)
}

func (g *signingGateway) post(what, to string, body []byte, hdr map[string]string, tok string) {
	req, _ := http.NewRequest(http.MethodPost, to, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if tok != "" {
		req.Header.Set("X-A2A-Notification-Token", tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Errorf("%s: %v", what, err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.mu.Lock()
	g.answers = append(g.answers, fmt.Sprintf("%s: %d %s", what, resp.StatusCode, bytes.TrimSpace(b)))
	g.mu.Unlock()
}

// An agent that signs its push notifications with Standard Webhooks (the
// npm reference library, over a2a-go's server and push sender) ends the
// turn by the signature alone: its deliveries carry no token. A delivery
// signed with another secret (even with the turn's good token), one signed
// 10 minutes ago, and one reusing a webhook-id taken before are refused and
// change nothing: the reply is the agent's, never the forged "FORGED".
func TestA2ASignedPushNotificationCompletesTheTurn(t *testing.T) {
	g := newSigningGateway(t)
	srv := pushAgent(t, &remote{}, g)
	f, js := pushFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":30,"webhookSecretRef":"push-hook"}`, srv.URL),
		secrets{"remote-token": "s3cret", "push-hook": theSecret})

	out, _ := f.turn(t, "count 6")
	if out.Fail != nil || out.Final != "1 2 3 4 5 6 " {
		t.Fatalf("outcome %+v, want the task's whole reply from its signed push notification", out)
	}
	g.mu.Lock()
	answers := append([]string(nil), g.answers...)
	g.mu.Unlock()
	want := map[string]string{
		"real msg_1":     `200 {"ok":true}`,
		"other secret":   `401 {"error":{"code":"unauthorized","message":"no valid v1 signature in webhook-signature"`,
		"10 minutes old": `401 {"error":{"code":"unauthorized","message":"webhook-timestamp is 10m`,
		"replayed id":    `200 {"duplicate":true,"ok":true}`,
	}
	for _, a := range answers {
		what, got, _ := strings.Cut(a, ": ")
		if w, ok := want[what]; ok {
			if !strings.HasPrefix(got, w) {
				t.Errorf("%s answered %s, want %s", what, got, w)
			}
			delete(want, what)
		} else if !strings.HasPrefix(got, "200") && !strings.HasPrefix(got, "401") { // 401: a delivery after the turn ended
			t.Errorf("%s answered %s", what, got)
		}
	}
	if len(want) > 0 {
		t.Fatalf("deliveries never made: %v (answers %q)", want, answers)
	}
	// Signed without a secret configured: refused, in words.
	hdr := signJS(t, theSecret, "msg_x", time.Now().Unix(), []byte(`{"id":"t1"}`))
	req, _ := http.NewRequest(http.MethodPost, js.URL+a2art.PushPath+"?agent=nobody", strings.NewReader(`{"id":"t1"}`))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), `\"nobody\" is not an A2A agent here`) {
		t.Fatalf("a delivery signed for an unknown agent: %d %s", resp.StatusCode, b)
	}
}

// TestA2ALatePushNotificationComesToTheInbox: the turn timed out while the
// agent could not be reached (so its task could not be cancelled); the task
// completes later and the agent's push notification brings its answer: it
// is kept in the conversation and becomes one Inbox item. The delivery
// repeated adds nothing.
func TestA2ALatePushNotificationComesToTheInbox(t *testing.T) {
	sender := &twice{inner: push.NewHTTPPushSender(nil)}
	srv := pushAgent(t, &remote{}, sender)
	f, _ := pushFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":0.5}`, srv.URL), nil)
	out, tt := f.turn(t, "count 30")
	if out.Fail == nil || out.Fail.Code != "a2a_timeout" {
		t.Fatalf("outcome %+v, want the turn timed out", out)
	}
	ctx := context.Background()
	if it := lateCount30(t, f, tt); it.Title != "Remote answered" {
		t.Fatalf("the Inbox item's title %q", it.Title)
	}
	testwait.Until(t, "the repeated delivery", 10*time.Second, func() bool {
		sender.mu.Lock()
		defer sender.mu.Unlock()
		for _, rp := range sender.repeats {
			if strings.HasPrefix(rp, "completed:") {
				return true
			}
		}
		return false
	})
	if rows, _, _ := f.env.Store.Inbox(ctx, false, 0); len(rows) != 1 {
		t.Fatalf("the repeated delivery added an item: %+v", rows)
	}
}

// unheard is an agent's push sender whose deliveries reach nobody (Jarvis
// was not running): it only counts them, by task state.
type unheard struct {
	mu   sync.Mutex
	sent map[a2a.TaskState]int
}

func (u *unheard) SendPush(_ context.Context, _ *a2a.PushConfig, task *a2a.Task) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sent == nil {
		u.sent = map[a2a.TaskState]int{}
	}
	u.sent[task.Status.State]++
	return nil
}

func (u *unheard) count(st a2a.TaskState) int { u.mu.Lock(); defer u.mu.Unlock(); return u.sent[st] }

// TestA2ALateAnswerIsReadAfterARestart: the turn timed out while the agent
// could not be reached; the task completed and its push notification never
// reached Jarvis (it had stopped). Started again on the same store, Jarvis
// reads the kept task with tasks/get: refused while the agent cannot be
// reached (the task stays kept), then, once it can, its answer is kept in the
// conversation and becomes one Inbox item, and the task is no longer kept.
func TestA2ALateAnswerIsReadAfterARestart(t *testing.T) {
	r := &remote{}
	sender := &unheard{}
	srv := pushAgent(t, r, sender)
	f, _ := pushFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":0.5}`, srv.URL), nil)
	out, tt := f.turn(t, "count 30")
	if out.Fail == nil || out.Fail.Code != "a2a_timeout" {
		t.Fatalf("outcome %+v, want the turn timed out", out)
	}
	ctx := context.Background()
	kept, err := f.env.Store.LateTasks(ctx)
	if err != nil || len(kept) != 1 || kept[0].SessionID != tt.SessionID || kept[0].AgentID != "remote" {
		t.Fatalf("kept %+v (%v), want the turn's task", kept, err)
	}
	testwait.Until(t, "the agent to push its completed task (to nobody)", 15*time.Second, func() bool { return sender.count(a2a.TaskStateCompleted) > 0 })
	gets := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for _, m := range r.methods {
			if m == "tasks/get" {
				n++
			}
		}
		return n
	}
	before := gets()

	// Jarvis again: a new runtime on the same store follows the kept task.
	again := a2art.New(f.env, a2art.Options{Waiter: f.waiter, LatePoll: 20 * time.Millisecond})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { again.FollowLate(stop); close(done) }()
	t.Cleanup(func() { close(stop); <-done })
	testwait.Until(t, "two reads of the task refused", 15*time.Second, func() bool { return gets() >= before+2 })
	if rows, _, _ := f.env.Store.Inbox(ctx, false, 0); len(rows) != 0 {
		t.Fatalf("an Inbox item before the task could be read: %+v", rows)
	}
	if kept, _ := f.env.Store.LateTasks(ctx); len(kept) != 1 {
		t.Fatalf("the task is no longer kept though it could not be read: %+v", kept)
	}

	r.reachable()
	lateCount30(t, f, tt)
	if kept, _ := f.env.Store.LateTasks(ctx); len(kept) != 0 {
		t.Fatalf("the answered task is still kept: %+v", kept)
	}
}

// lateCount30 waits for the late answer of tt ("count 30") in the Inbox and
// checks it: one answer item for its session, and the answer kept once in
// the conversation, as a turn of its own. It returns the item.
func lateCount30(t *testing.T, f *fixture, tt *turn.Turn) store.InboxRow {
	t.Helper()
	ctx := context.Background()
	var items []store.InboxRow
	testwait.Until(t, "the late answer in the Inbox", 15*time.Second, func() bool {
		rows, _, err := f.env.Store.Inbox(ctx, false, 0)
		items = rows
		return err == nil && len(rows) > 0
	})
	want := ""
	for i := 1; i <= 30; i++ {
		want += fmt.Sprintf("%d ", i)
	}
	it := items[0]
	if len(items) != 1 || it.Kind != "answer" || it.SessionID != tt.SessionID || it.Body != strings.TrimSpace(want) {
		t.Fatalf("inbox %+v", items)
	}
	msgs, err := f.env.Store.Messages(ctx, tt.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content != want || last.TurnID == tt.ID {
		t.Fatalf("the late answer is not kept in the conversation: %+v", last)
	}
	answers := 0
	for _, m := range msgs {
		if m.Role == "assistant" && m.Content == want {
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("the late answer is kept %d times", answers)
	}
	return it
}
