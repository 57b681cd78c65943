package secrets_test

import (
	"errors"
	"os"
	"testing"

	"jarvis/service/secrets"
)

func TestEnvOverride(t *testing.T) {
	env := map[string]string{"JARVIS_SECRET_MY_KEY_1": "from-env"}
	s := secrets.New(func(k string) string { return env[k] })
	if got := secrets.EnvName("my-key.1"); got != "JARVIS_SECRET_MY_KEY_1" {
		t.Fatalf("EnvName %q", got)
	}
	v, err := s.Get("my-key.1")
	if err != nil || v != "from-env" {
		t.Fatalf("%q %v", v, err)
	}
	if _, err := s.Get(""); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("empty ref: %v", err)
	}
}

// TestRealKeyring runs against a real Secret Service: `make test` starts a
// private D-Bus session with an unlocked gnome-keyring for it. Without a
// session bus the keyring is unavailable and Get must say so, not crash.
func TestRealKeyring(t *testing.T) {
	s := secrets.New(func(string) string { return "" })
	ref := "jarvis-test-secret"
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		_, err := s.Get(ref)
		if !errors.Is(err, secrets.ErrNotFound) || err.Error() == "" {
			t.Fatalf("without a keyring: %v", err)
		}
		t.Skip("no D-Bus session bus: run through scripts/with-session-bus.sh (make test does) for the real-keyring part")
	}
	if err := s.Set(ref, "s3cret value"); err != nil {
		t.Fatal(err)
	}
	defer s.Delete(ref)
	v, err := s.Get(ref)
	if err != nil || v != "s3cret value" {
		t.Fatalf("%q %v", v, err)
	}
	if err := s.Delete(ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ref); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
