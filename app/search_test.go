package app

import (
	"testing"
	"time"
)

// The find box's binding reaches the real service: a conversation is found
// by a word of its message, blank text finds nothing, and text over the
// service's limit comes back as its plain-word refusal.
func TestSearchSessions(t *testing.T) {
	d := newRealDesktop(t, 30, "")
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.app.Send(s.SessionID, "remind me about the marmalade recipe"); err != nil {
		t.Fatal(err)
	}
	// Send returns before the turn is stored; wait for the message.
	deadline := time.Now().Add(20 * time.Second)
	for {
		hits, err := d.app.SearchSessions("  Marmalade ")
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 1 && hits[0].Session.SessionID == s.SessionID && hits[0].Snippet != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not found: %+v", hits)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hits, err := d.app.SearchSessions("   "); err != nil || hits == nil || len(hits) != 0 {
		t.Fatalf("blank: %+v %v", hits, err)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if _, err := d.app.SearchSessions(string(long)); err == nil {
		t.Fatal("a 300-character query was accepted")
	}
}
