package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"jarvis/api"
)

// sseServer is a scripted session stream: each connection runs the next
// script with the request's Last-Event-ID.
type sseServer struct {
	mu      sync.Mutex
	scripts []func(w http.ResponseWriter, lastID string)
	seen    []string // Last-Event-ID of each connection
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.seen)
	s.seen = append(s.seen, r.Header.Get("Last-Event-ID"))
	var script func(http.ResponseWriter, string)
	if n < len(s.scripts) {
		script = s.scripts[n]
	}
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer tok" {
		http.Error(w, `{"error":{"code":"unauthorized","message":"no"}}`, http.StatusUnauthorized)
		return
	}
	if script == nil {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	script(w, r.Header.Get("Last-Event-ID"))
}

func (s *sseServer) lastIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func send(w http.ResponseWriter, id int, typ, data string) {
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, typ, data)
	w.(http.Flusher).Flush()
}

type recorder struct {
	mu     sync.Mutex
	ids    []string
	states []StreamState
	got    chan string
}

func newRecorder() *recorder { return &recorder{got: make(chan string, 100)} }

func (r *recorder) event(ev api.StreamEvent) {
	r.mu.Lock()
	r.ids = append(r.ids, ev.ID)
	r.mu.Unlock()
	r.got <- ev.ID
}

func (r *recorder) state(s StreamState) {
	r.mu.Lock()
	r.states = append(r.states, s)
	r.mu.Unlock()
}

func (r *recorder) waitID(t *testing.T, id string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case got := <-r.got:
			if got == id {
				return
			}
		case <-deadline:
			t.Fatalf("event %s never arrived; got %v", id, r.snapshot())
		}
	}
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

func startFollower(t *testing.T, h http.Handler, opts FollowOptions) (*recorder, context.CancelFunc) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL, "tok", NewStreamHTTPClient())
	rec := newRecorder()
	f := newFollower(c, "g_1", "", opts, rec.event, rec.state)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return rec, cancel
}

// A connection that drops mid-turn resumes with Last-Event-ID: every delta
// arrives once, in order, even when the server replays one already seen.
func TestFollowerResumesMidTurnWithoutDuplicates(t *testing.T) {
	s := &sseServer{scripts: []func(http.ResponseWriter, string){
		func(w http.ResponseWriter, _ string) {
			send(w, 1, "user.message", `{"text":"hi","turn_id":"t1"}`)
			send(w, 2, "assistant.delta", `{"text":"Hel","turn_id":"t1"}`)
			send(w, 3, "assistant.delta", `{"text":"lo","turn_id":"t1"}`)
			// the connection drops here, mid-turn
		},
		func(w http.ResponseWriter, last string) {
			n, _ := strconv.Atoi(last)
			send(w, n, "assistant.delta", `{"text":"lo","turn_id":"t1"}`) // a replay of what we had
			send(w, 4, "assistant.delta", `{"text":" there","turn_id":"t1"}`)
			send(w, 5, "assistant.final", `{"text":"Hello there","turn_id":"t1"}`)
		},
	}}
	rec, _ := startFollower(t, s, FollowOptions{FirstRetry: 10 * time.Millisecond, Silence: 5 * time.Second})
	rec.waitID(t, "5")
	if got, want := fmt.Sprint(rec.snapshot()), "[1 2 3 4 5]"; got != want {
		t.Fatalf("delivered %s, want %s", got, want)
	}
	if ids := s.lastIDs(); len(ids) < 2 || ids[0] != "" || ids[1] != "3" {
		t.Fatalf("Last-Event-ID per connection = %q, want first empty then 3", ids)
	}
}

// A connection that carries no byte for the silence limit is dead: the
// follower drops it and reconnects from the last id.
func TestFollowerDropsSilentConnection(t *testing.T) {
	s := &sseServer{scripts: []func(http.ResponseWriter, string){
		func(w http.ResponseWriter, _ string) {
			send(w, 1, "assistant.delta", `{"text":"a"}`)
			time.Sleep(2 * time.Second) // silent: no heartbeat
		},
		func(w http.ResponseWriter, _ string) {
			send(w, 2, "assistant.final", `{"text":"a"}`)
			time.Sleep(time.Second)
		},
	}}
	start := time.Now()
	rec, _ := startFollower(t, s, FollowOptions{FirstRetry: 10 * time.Millisecond, Silence: 200 * time.Millisecond})
	rec.waitID(t, "2")
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("reconnect took %v: the silent connection was not detected", d)
	}
	if ids := s.lastIDs(); ids[1] != "1" {
		t.Fatalf("second connection sent Last-Event-ID %q, want 1", ids[1])
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	found := false
	for _, st := range rec.states {
		if st.State == StateReconnecting && st.Error == errSilent.Error() {
			found = true
		}
	}
	if !found {
		t.Fatalf("no reconnecting state naming the silence; states %+v", rec.states)
	}
}

// An idle stream (heartbeats only) is live as soon as the service answers.
func TestFollowerLiveBeforeAnyEvent(t *testing.T) {
	s := &sseServer{scripts: []func(http.ResponseWriter, string){
		func(w http.ResponseWriter, _ string) { time.Sleep(2 * time.Second) },
	}}
	rec, _ := startFollower(t, s, FollowOptions{Silence: 5 * time.Second})
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		rec.mu.Lock()
		n := len(rec.states)
		var last StreamState
		if n > 0 {
			last = rec.states[n-1]
		}
		rec.mu.Unlock()
		if last.State == StateLive {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the idle stream never became live")
}

// Heartbeat comments are bytes: they keep a quiet connection alive.
func TestFollowerHeartbeatsKeepConnectionAlive(t *testing.T) {
	s := &sseServer{scripts: []func(http.ResponseWriter, string){
		func(w http.ResponseWriter, _ string) {
			send(w, 1, "status", `{"text":"x"}`)
			for i := 0; i < 12; i++ {
				time.Sleep(50 * time.Millisecond)
				fmt.Fprint(w, ": heartbeat\n\n")
				w.(http.Flusher).Flush()
			}
			send(w, 2, "status", `{"text":"y"}`)
			time.Sleep(time.Second)
		},
	}}
	rec, _ := startFollower(t, s, FollowOptions{FirstRetry: 10 * time.Millisecond, Silence: 200 * time.Millisecond})
	rec.waitID(t, "2")
	rec.mu.Lock()
	first := rec.states[1]
	rec.mu.Unlock()
	if first.State != StateLive {
		t.Fatalf("second state %+v, want live as soon as the stream opened", first)
	}
	if n := len(s.lastIDs()); n != 1 {
		t.Fatalf("%d connections, want 1: heartbeats did not count as activity", n)
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, w := range want {
		if got := backoff(time.Second, 30*time.Second, i+1); got != w*time.Second {
			t.Errorf("attempt %d: %v, want %v", i+1, got, w*time.Second)
		}
	}
}

// A deleted session (404) is not retried forever.
func TestFollowerStopsOnMissingSession(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"code":"session_not_found","message":"no session \"g_1\""}}`)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	rec := newRecorder()
	f := newFollower(api.NewClient(srv.URL, "tok", nil), "g_1", "", FollowOptions{FirstRetry: time.Millisecond}, rec.event, rec.state)
	done := make(chan struct{})
	go func() { f.run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the follower kept retrying a missing session")
	}
	if last := rec.states[len(rec.states)-1]; last.State != StateClosed || last.Error == "" {
		t.Fatalf("last state %+v, want closed with the service's message", last)
	}
}
