package a2art_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"jarvis/api"
	"jarvis/internal/testwait"
	"jarvis/service/a2art"
	"jarvis/service/config"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// remote is an A2A agent built with a2a-go's own server (a2asrv): the
// message's text is a command.
//
//	echo TEXT   streams "you said", " TEXT" as two artifact chunks, completes
//	slow        streams a chunk every 100 ms for 10 s (until cancelled)
//	fail        ends the task failed with a reason
//	ask         ends the task input-required, asking a question
//	count N     streams N chunks "1 ", "2 ", … 50 ms apart, completes
type remote struct {
	mu       sync.Mutex
	contexts []string // the context id of each message received
	cancels  int
	auth     []string // the Authorization header of each JSON-RPC request
	// breakStream, when set, cuts the first message/stream's connection
	// after its first artifact chunk (the task goes on at the agent).
	breakStream bool
	methods     []string // the JSON-RPC methods called, in order
	// reachable (set by pushAgent) makes the agent answer again after the cut.
	reachable func()
}

func (r *remote) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	r.mu.Lock()
	r.contexts = append(r.contexts, rc.Message.ContextID)
	r.mu.Unlock()
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	text := rc.Message.Parts[0].(a2a.TextPart).Text
	cmd, arg, _ := strings.Cut(text, " ")
	end := func(state a2a.TaskState, msg string) error {
		var m *a2a.Message
		if msg != "" {
			m = a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: msg})
		}
		ev := a2a.NewStatusUpdateEvent(rc, state, m)
		ev.Final = true
		return q.Write(ctx, ev)
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: "on it"}))); err != nil {
		return err
	}
	switch cmd {
	case "echo":
		first := a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "you said"})
		if err := q.Write(ctx, first); err != nil {
			return err
		}
		if err := q.Write(ctx, a2a.NewArtifactUpdateEvent(rc, first.Artifact.ID, a2a.TextPart{Text: " " + arg})); err != nil {
			return err
		}
		return end(a2a.TaskStateCompleted, "")
	case "slow":
		first := a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "."})
		if err := q.Write(ctx, first); err != nil {
			return err
		}
		for range 100 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			if err := q.Write(ctx, a2a.NewArtifactUpdateEvent(rc, first.Artifact.ID, a2a.TextPart{Text: "."})); err != nil {
				return nil
			}
		}
		return end(a2a.TaskStateCompleted, "")
	case "count":
		var n int
		fmt.Sscan(arg, &n)
		var id a2a.ArtifactID
		for i := 1; i <= n; i++ {
			var ev *a2a.TaskArtifactUpdateEvent
			if id == "" {
				ev = a2a.NewArtifactEvent(rc, a2a.TextPart{Text: fmt.Sprintf("%d ", i)})
				id = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(rc, id, a2a.TextPart{Text: fmt.Sprintf("%d ", i)})
			}
			if err := q.Write(ctx, ev); err != nil {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
		return end(a2a.TaskStateCompleted, "")
	case "fail":
		return end(a2a.TaskStateFailed, "the disk is full")
	case "ask":
		return end(a2a.TaskStateInputRequired, "Which branch?")
	}
	return end(a2a.TaskStateRejected, "unknown command")
}

func (r *remote) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	r.mu.Lock()
	r.cancels++
	r.mu.Unlock()
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// serve runs the remote agent on a loopback test server: its card (with
// a bearer scheme) at the well-known path, JSON-RPC at /rpc.
func serve(t *testing.T, r *remote, streaming bool) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{Name: "Remote", URL: srv.URL + "/rpc", PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0",
		Capabilities: a2a.AgentCapabilities{Streaming: streaming}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:          []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "says it back", Tags: []string{"test"}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
		Security:        []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}}}
	mux.Handle("GET /.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(r))
	mux.Handle("POST /rpc", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var call struct{ Method string }
		_ = json.Unmarshal(body, &call)
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.methods = append(r.methods, call.Method)
		cut := r.breakStream && call.Method == "message/stream"
		r.breakStream = r.breakStream && !cut
		r.mu.Unlock()
		if cut {
			w = &cutter{ResponseWriter: w}
		}
		rpc.ServeHTTP(w, req)
	}))
	return srv
}

// cutter ends the connection once an artifact chunk has been written.
type cutter struct{ http.ResponseWriter }

func (c *cutter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte(`"artifact-update"`)) {
		c.Flush()
		panic(http.ErrAbortHandler) // net/http closes the connection
	}
	return n, err
}

func (c *cutter) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

type secrets map[string]string

func (s secrets) Get(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

type fixture struct {
	rt     *a2art.Runtime
	env    turn.Env
	rec    *turntest.Recorder
	waiter *toolwait.Waiter
	cfg    *config.Config
}

// newFixture is the A2A runtime over a real store with one agent "remote"
// whose "a2a" settings are given.
func newFixture(t *testing.T, settings string) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse("test.json", []byte(`{"agents":[{"agentId":"remote","displayName":"Remote","type":"a2a","a2a":`+settings+`}],"toolResultTimeoutSeconds":30}`))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	env.Secrets = secrets{"remote-token": "s3cret"}
	f := &fixture{env: env, rec: rec, cfg: cfg, waiter: toolwait.New(env)}
	f.rt = a2art.New(env, a2art.Options{Waiter: f.waiter})
	return f
}

// approve answers every agents_message request of the session with allow
// (or deny), as the desktop's gate would, until the test ends.
func (f *fixture) approve(t *testing.T, sessID string, allow bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		seen := map[string]bool{}
		for ctx.Err() == nil {
			for _, ev := range f.rec.Events() {
				var req api.ToolCall
				if ev.Type != api.EventToolRequest || json.Unmarshal(ev.Data, &req) != nil || seen[req.ID] {
					continue
				}
				seen[req.ID] = true
				r := api.ToolResult{ID: req.ID, OK: allow, Result: "approved: the service runs it"}
				if !allow {
					msg := "the user denied it"
					r.Error = &msg
				}
				_ = f.waiter.Deliver(context.Background(), sessID, r)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
}

func (f *fixture) turn(t *testing.T, text string) (turn.Outcome, *turn.Turn) {
	t.Helper()
	tt, sess := turntest.Begin(t, f.env, "remote", text)
	f.approve(t, sess.ID, true)
	agent, _ := f.cfg.Agent("remote")
	return f.rt.Run(t.Context(), tt, sess, agent), tt
}

func (f *fixture) deltas(turnID string) string {
	var b strings.Builder
	for _, ev := range f.rec.Events() {
		var te api.TextEvent
		if ev.Type == api.EventDelta && json.Unmarshal(ev.Data, &te) == nil && te.TurnID == turnID {
			b.WriteString(te.Text)
		}
	}
	return b.String()
}

// Conformance, client side: Jarvis's A2A runtime against a2a-go's own
// server, streaming and not, with the card's bearer scheme given the
// keyring secret; every message first went to the gate as agents_message.
func TestA2AClientAgainstA2AGoServer(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			r := &remote{}
			srv := serve(t, r, streaming)
			f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q,"secretRef":"remote-token"}`, srv.URL+"/.well-known/agent-card.json"))
			out, tt := f.turn(t, "echo hello")
			if out.Fail != nil || out.Final != "you said hello" || out.Last == nil || !strings.Contains(out.Last.Meta, `"state":"completed"`) {
				t.Fatalf("outcome %+v (fail %+v)", out, out.Fail)
			}
			if d := f.deltas(tt.ID); d != "you said hello" {
				t.Errorf("deltas %q", d)
			}
			req, ok := f.rec.First(api.EventToolRequest)
			var call api.ToolCall
			if !ok || json.Unmarshal(req, &call) != nil || call.Name != "agents_message" || call.Source != "service" || !strings.Contains(string(call.Arguments), `"content":"echo hello"`) {
				t.Fatalf("the gate was not asked first: %s", req)
			}
			r.mu.Lock()
			auth := append([]string(nil), r.auth...)
			r.mu.Unlock()
			if len(auth) == 0 || auth[0] != "Bearer s3cret" {
				t.Fatalf("Authorization headers %q, want the keyring secret as the bearer token", auth)
			}
			var info api.AgentInfo
			agent, _ := f.cfg.Agent("remote")
			f.rt.Describe(agent, &info)
			if info.A2A == nil || len(info.A2A.Skills) != 1 || info.A2A.Skills[0].ID != "echo" {
				t.Fatalf("the card's skills are not shown: %+v", info.A2A)
			}
		})
	}
}

// The next turn continues the A2A context of the session's last reply.
func TestA2AContextKeptAcrossTurns(t *testing.T) {
	r := &remote{}
	srv := serve(t, r, true)
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, srv.URL))
	tt, sess := turntest.Begin(t, f.env, "remote", "echo one")
	f.approve(t, sess.ID, true)
	agent, _ := f.cfg.Agent("remote")
	first := f.rt.Run(t.Context(), tt, sess, agent)
	if first.Fail != nil {
		t.Fatal(first.Fail)
	}
	if _, err := f.env.Store.AddMessage(context.Background(), *first.Last); err != nil {
		t.Fatal(err)
	}
	tt2 := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: tt.User}
	tt2.User.Content = "echo two"
	if o := f.rt.Run(t.Context(), tt2, sess, agent); o.Fail != nil {
		t.Fatal(o.Fail)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.contexts) != 2 || r.contexts[0] != "" || r.contexts[1] == "" {
		t.Fatalf("context ids sent %q: the second turn should continue the first's context", r.contexts)
	}
}

// A task that fails, asks for input, or is refused by the gate.
func TestA2ATaskEndsAndTheGate(t *testing.T) {
	r := &remote{}
	srv := serve(t, r, true)
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, srv.URL))
	if o, _ := f.turn(t, "fail"); o.Fail == nil || o.Fail.Code != "a2a_failed" || !strings.Contains(o.Fail.Message, "the disk is full") {
		t.Fatalf("failed task: %+v", o.Fail)
	}
	if o, _ := f.turn(t, "ask"); o.Fail != nil || o.Final != "Which branch?" {
		t.Fatalf("input-required task: %+v %+v", o, o.Fail)
	}
	tt, sess := turntest.Begin(t, f.env, "remote", "echo secret")
	f.approve(t, sess.ID, false)
	agent, _ := f.cfg.Agent("remote")
	before := len(r.contexts)
	if o := f.rt.Run(t.Context(), tt, sess, agent); o.Fail == nil || o.Fail.Code != "a2a_denied" || !strings.Contains(o.Fail.Message, "the user denied it") {
		t.Fatalf("denied: %+v", o.Fail)
	}
	if len(r.contexts) != before {
		t.Fatal("a message the gate denied reached the agent")
	}
}

// Cancelling the turn cancels the remote task (tasks/cancel).
func TestA2ACancelCancelsTheTask(t *testing.T) {
	r := &remote{}
	srv := serve(t, r, true)
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, srv.URL))
	tt, sess := turntest.Begin(t, f.env, "remote", "slow")
	f.approve(t, sess.ID, true)
	agent, _ := f.cfg.Agent("remote")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.rt.Run(ctx, tt, sess, agent) }()
	testwait.Until(t, "the first streamed chunk", 10*time.Second, func() bool { return f.deltas(tt.ID) != "" })
	cancel()
	if o := <-done; o.Fail == nil || o.Fail.Code != "cancelled" {
		t.Fatalf("outcome %+v", o.Fail)
	}
	testwait.Until(t, "tasks/cancel at the agent", 10*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.cancels == 1
	})
}

// Faults: an agent that is down, a slow stream past the turn's timeout,
// malformed JSON-RPC, a card that points at a link-local address.
func TestA2AFaults(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, downURL))
	if o, _ := f.turn(t, "echo x"); o.Fail == nil || o.Fail.Code != "a2a_unreachable" || !strings.Contains(o.Fail.Message, "could not be read") {
		t.Fatalf("agent down: %+v", o.Fail)
	}

	r := &remote{}
	srv := serve(t, r, true)
	f = newFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":0.5}`, srv.URL))
	if o, _ := f.turn(t, "slow"); o.Fail == nil || o.Fail.Code != "a2a_timeout" {
		t.Fatalf("slow stream: %+v", o.Fail)
	}
	testwait.Until(t, "the timed-out task cancelled at the agent", 10*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.cancels == 1
	})

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":`)
	}))
	t.Cleanup(bad.Close)
	card := fmt.Sprintf(`{"name":"Bad","url":%q,"preferredTransport":"JSONRPC","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"","skills":[],"version":"1"}`, bad.URL)
	f = newFixture(t, `{"card":`+card+`}`)
	if o, _ := f.turn(t, "echo x"); o.Fail == nil || o.Fail.Code != "a2a_failed" {
		t.Fatalf("malformed JSON-RPC: %+v", o.Fail)
	}

	// A card served from a fine address that sends messages to the cloud
	// metadata address: refused before anything is sent there.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"Evil","url":"http://169.254.169.254/rpc","preferredTransport":"JSONRPC","protocolVersion":"0.3.0","capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"description":"","skills":[],"version":"1"}`)
	}))
	t.Cleanup(evil.Close)
	f = newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, evil.URL))
	if o, _ := f.turn(t, "echo x"); o.Fail == nil || o.Fail.Code != "a2a_unreachable" || !strings.Contains(o.Fail.Message, "169.254.169.254") {
		t.Fatalf("card pointing at link-local: %+v", o.Fail)
	}
	// The same address in the settings is refused when they are read.
	if _, err := config.Parse("x.json", []byte(`{"agents":[{"agentId":"r","type":"a2a","a2a":{"cardUrl":"http://169.254.169.254/"}}]}`)); err != nil {
		t.Fatal(err)
	}
	f = newFixture(t, `{"cardUrl":"http://169.254.169.254/"}`)
	agent, _ := f.cfg.Agent("remote")
	if err := f.rt.Validate(agent); err == nil {
		t.Fatal("a card URL at a link-local address was accepted")
	}
}

// A turn another agent delegated (its agents_message was gated in the
// caller's turn) is not gated a second time.
func TestA2ADelegatedTurnGatedOnce(t *testing.T) {
	r := &remote{}
	srv := serve(t, r, true)
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, srv.URL))
	tt, sess := turntest.Begin(t, f.env, "remote", "echo delegated")
	tt.Chain = []string{"main", "remote"}
	agent, _ := f.cfg.Agent("remote")
	if o := f.rt.Run(t.Context(), tt, sess, agent); o.Fail != nil || o.Final != "you said delegated" {
		t.Fatalf("outcome %+v %+v", o, o.Fail)
	}
	if _, asked := f.rec.First(api.EventToolRequest); asked {
		t.Fatal("a delegated turn asked the gate again")
	}
}

// A stream that breaks mid-task is followed again with tasks/resubscribe:
// the reply is whole and the turn succeeds.
func TestA2AStreamResumedAfterABreak(t *testing.T) {
	r := &remote{breakStream: true}
	srv := serve(t, r, true)
	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q}`, srv.URL))
	out, tt := f.turn(t, "count 6")
	if out.Fail != nil {
		t.Fatalf("a broken stream failed the turn: %+v", out.Fail)
	}
	r.mu.Lock()
	methods := strings.Join(r.methods, " ")
	r.mu.Unlock()
	if !strings.Contains(methods, "message/stream") || !strings.Contains(methods, "tasks/resubscribe") {
		t.Fatalf("methods %q: no resubscribe after the break", methods)
	}
	if out.Final != "1 2 3 4 5 6 " {
		t.Fatalf("final %q (deltas %q)", out.Final, f.deltas(tt.ID))
	}
	said := false
	for _, ev := range f.rec.Events() {
		if ev.Type == api.EventStatus && strings.Contains(string(ev.Data), "following its task again") {
			said = true
		}
	}
	if !said {
		t.Fatal("no status line said the stream broke")
	}
}
