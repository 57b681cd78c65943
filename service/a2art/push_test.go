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

// pushAgent is a2a-go's server with push notifications (sent twice each),
// whose first stream is cut after its first chunk and which cannot be
// reached after that, and Jarvis's push route; the turn times out after
// timeout seconds.
func pushAgent(t *testing.T, timeout string) (*fixture, *twice, *httptest.Server) {
	r := &remote{breakStream: true}
	sender := &twice{inner: push.NewHTTPPushSender(nil)}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{Name: "Remote", URL: srv.URL + "/rpc", PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0",
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo"}}}
	mux.Handle("GET /.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(r, a2asrv.WithPushNotifications(push.NewInMemoryStore(), sender)))
	var down bool
	var mu sync.Mutex
	mux.Handle("POST /rpc", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var call struct{ Method string }
		_ = json.Unmarshal(body, &call)
		mu.Lock()
		cut := r.breakStream && call.Method == "message/stream"
		r.breakStream = r.breakStream && !cut
		refuse := down
		down = down || cut
		r.methods = append(r.methods, call.Method)
		mu.Unlock()
		if refuse { // the agent cannot be reached after the cut
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		if cut {
			w = &cutter{ResponseWriter: w}
		}
		rpc.ServeHTTP(w, req)
	}))

	f := newFixture(t, fmt.Sprintf(`{"cardUrl":%q,"timeoutSeconds":%s}`, srv.URL, timeout))
	jarvis := http.NewServeMux()
	js := httptest.NewServer(jarvis)
	t.Cleanup(js.Close)
	f.env.BaseURL = func() string { return js.URL }
	f.rt = a2art.New(f.env, a2art.Options{Waiter: f.waiter})
	for _, rr := range f.rt.Routes() {
		jarvis.Handle(rr.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), rr.Handle))
	}

	return f, sender, js
}

// A task that finished while its agent could not be reached (the stream cut
// mid-task, then every JSON-RPC call refused) ends the turn through the
// agent's push notification: a2a-go's server and push sender post the task
// to Jarvis's push route with the turn's token; the reply is the task's
// whole. A delivery repeated is answered as a duplicate; a wrong token is
// refused.
func TestA2APushNotificationCompletesTheTurn(t *testing.T) {
	f, sender, js := pushAgent(t, "30")
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

// TestA2ALatePushNotificationComesToTheInbox: the turn timed out while the
// agent could not be reached (so its task could not be cancelled); the task
// completes later and the agent's push notification brings its answer: it
// is kept in the conversation and becomes one Inbox item. The delivery
// repeated adds nothing.
func TestA2ALatePushNotificationComesToTheInbox(t *testing.T) {
	f, sender, _ := pushAgent(t, "0.5")
	out, tt := f.turn(t, "count 30")
	if out.Fail == nil || out.Fail.Code != "a2a_timeout" {
		t.Fatalf("outcome %+v, want the turn timed out", out)
	}
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
	if len(items) != 1 || it.Kind != "answer" || it.Title != "Remote answered" || it.SessionID != tt.SessionID || it.Body != strings.TrimSpace(want) {
		t.Fatalf("inbox %+v", items)
	}
	msgs, err := f.env.Store.Messages(ctx, tt.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != "assistant" || last.Content != want || last.TurnID == tt.ID {
		t.Fatalf("the late answer is not kept in the conversation: %+v", last)
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
