package app

import "testing"

// A pin goes to the real service and comes back in the session list.
func TestPinSession(t *testing.T) {
	d := newRealDesktop(t, 30, "")
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	pinnedAt := func() string {
		ss, err := d.app.Sessions("")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ss {
			if x.SessionID == s.SessionID {
				return x.PinnedAt
			}
		}
		t.Fatalf("session %s not listed", s.SessionID)
		return ""
	}
	if err := d.app.PinSession(s.SessionID, true); err != nil {
		t.Fatal(err)
	}
	if pinnedAt() == "" {
		t.Fatal("not pinned")
	}
	if err := d.app.PinSession(s.SessionID, false); err != nil {
		t.Fatal(err)
	}
	if got := pinnedAt(); got != "" {
		t.Fatalf("still pinned at %s", got)
	}
	if err := d.app.PinSession("no-such-session", true); err == nil {
		t.Fatal("pinning a missing session succeeded")
	}
}
