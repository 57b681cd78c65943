package app

import (
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
)

// TestOpeningAFollowedSessionSaysItsStreamState: a session the window
// follows already (a task's run, followed in the background to gate its
// calls, from before the page listened) is opened: the window is told its
// stream's state again, so the header says "Live", not "No session open".
func TestOpeningAFollowedSessionSaysItsStreamState(t *testing.T) {
	d := newRealDesktop(t, 60, "")
	var mu sync.Mutex
	var states []StreamState
	a, err := New(Options{Client: d.c, StreamClient: api.NewClient(d.c.BaseURL(), realToken, NewStreamHTTPClient()), Emit: func(ev string, data any) {
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

// TestNothingIsFollowedAfterShutdown: the window's background loops (task
// runs, headless) may try to follow a session while the window shuts down.
// Once Shutdown has begun, no follower starts: one started then would run
// unwaited, and its start raced Shutdown's wait (seen under -race in CI).
func TestNothingIsFollowedAfterShutdown(t *testing.T) {
	d := newRealDesktop(t, 60, "")
	a, err := New(Options{Client: d.c, Emit: func(string, any) {}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	Shutdown(a)
	a.follow(s.SessionID, "")
	if a.fol.has(s.SessionID) {
		a.fol.stop(s.SessionID)
		t.Fatal("a session was followed after Shutdown")
	}
}
