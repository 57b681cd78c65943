package secrets_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// Without a session bus the keyring is unavailable, said so clearly, and no
// bus is started behind the user's back (godbus would autolaunch one that
// outlives the process).
func TestNoSessionBus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the Secret Service over D-Bus is the keyring on Linux")
	}
	// godbus autolaunches a bus by running dbus-launch (found on PATH) and
	// waiting for it: a stand-in that records being run proves, once Get
	// and Set have returned, whether a launch was tried.
	bin := t.TempDir()
	launched := filepath.Join(bin, "launched")
	stub := "#!/bin/sh\necho \"$@\" >> '" + launched + "'\nexit 1\n"
	for _, name := range []string{"dbus-launch", "dbus-daemon"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	s := secrets.New(func(string) string { return "" })
	_, err := s.Get("some-ref")
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "no D-Bus session bus") || !strings.Contains(err.Error(), "JARVIS_SECRET_SOME_REF") {
		t.Fatalf("Get: %v", err)
	}
	if err := s.Set("some-ref", "v"); err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Set: %v", err)
	}
	if b, err := os.ReadFile(launched); err == nil {
		t.Fatalf("a session bus was launched: dbus-launch %s", b)
	}
}
