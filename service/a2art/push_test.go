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

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/push"

	"jarvis/internal/testhttp"
	"jarvis/service/a2art"
	"jarvis/service/httpapi"
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
// gets 503, so only a push notification can end the turn.
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
