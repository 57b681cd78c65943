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
		res, err := d.app.SearchSessions("  Marmalade ", "")
		if err != nil {
			t.Fatal(err)
		}
		hits := res.Results
		if len(hits) == 1 && hits[0].Session.SessionID == s.SessionID && hits[0].Snippet != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not found: %+v", hits)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res, err := d.app.SearchSessions("   ", ""); err != nil || res.Results == nil || len(res.Results) != 0 {
		t.Fatalf("blank: %+v %v", res, err)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if _, err := d.app.SearchSessions(string(long), ""); err == nil {
		t.Fatal("a 300-character query was accepted")
	}
}

// The window's list binding pages through the real service's list: a full
// page says where the next starts, and the pages hold every session once.
func TestSessionsPage(t *testing.T) {
	d := newRealDesktop(t, 30, "")
	made := map[string]bool{}
	for range ListPage + 1 {
		s, err := d.app.NewSession("general")
		if err != nil {
			t.Fatal(err)
		}
		made[s.SessionID] = true
	}
	first, err := d.app.SessionsPage("", "")
	if err != nil || len(first.Sessions) != ListPage || first.NextCursor == "" {
		t.Fatalf("first page: %d sessions, cursor %q, %v", len(first.Sessions), first.NextCursor, err)
	}
	second, err := d.app.SessionsPage("", first.NextCursor)
	if err != nil || len(second.Sessions) != 1 || second.NextCursor != "" {
		t.Fatalf("second page: %+v %v", second, err)
	}
	seen := map[string]bool{}
	for _, s := range append(first.Sessions, second.Sessions...) {
		if seen[s.SessionID] || !made[s.SessionID] {
			t.Fatalf("session %s listed twice or never made", s.SessionID)
		}
		seen[s.SessionID] = true
	}
	if len(seen) != len(made) {
		t.Fatalf("%d sessions listed, %d made", len(seen), len(made))
	}
	if _, err := d.app.SessionsPage("", "not-a-cursor"); err == nil {
		t.Fatal("a cursor the list never gave was accepted")
	}
}
