package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
	"jarvis/service"
	"jarvis/service/config"
)

// TestOpeningAFollowedSessionSaysItsStreamState: a session the window
// follows already (a task's run, followed in the background to gate its
// calls, from before the page listened) is opened: the window is told its
// stream's state again, so the header says "Live", not "No session open".
func TestOpeningAFollowedSessionSaysItsStreamState(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	cfg, err := config.Parse("c.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: realToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	var mu sync.Mutex
	var states []StreamState
	c := api.NewClient(srv.URL, realToken, &http.Client{})
	a, err := New(Options{Client: c, StreamClient: api.NewClient(srv.URL, realToken, NewStreamHTTPClient()), Emit: func(ev string, data any) {
		if st, ok := data.(StreamState); ok && ev == "stream:state" {
			mu.Lock()
			states = append(states, st)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	Start(a)
	t.Cleanup(func() { Shutdown(a) })
	s, err := a.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	live := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range states {
			if st.SessionID == s.SessionID && st.State == StateLive {
				return true
			}
		}
		return false
	}
	a.follow(s.SessionID, "") // followed in the background, before the page listened
	testwait.Until(t, "the background follower live", 10*time.Second, live)
	mu.Lock()
	states = nil // what the page heard before it listened is lost
	mu.Unlock()
	if _, err := a.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	if !live() {
		t.Fatalf("opening the followed session said no stream state (%+v): the header would read \"No session open\"", states)
	}
}
