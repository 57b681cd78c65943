package secrets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"jarvis/service/secrets"
)

// syncBuf is a log sink the test can read.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// noKeyring makes the keyring unreachable the way a headless box does: no
// session bus.
func noKeyring(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the Secret Service over D-Bus is the keyring on Linux")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
}

// Without a keyring a key goes to the fallback file: mode 0600, marked as
// less protected in the file and in the log, found again by Get, and the
// environment override still wins.
func TestFileFallbackWithoutKeyring(t *testing.T) {
	noKeyring(t)
	dir := filepath.Join(t.TempDir(), "config", "jarvis")
	path := filepath.Join(dir, "secrets.json")
	var logs syncBuf
	env := map[string]string{}
	s := secrets.New(func(k string) string { return env[k] }, secrets.WithFile(path, slog.New(slog.NewTextHandler(&logs, nil))))

	where, err := s.Put("openai", "sk-file-1")
	if err != nil || where != secrets.InFile {
		t.Fatalf("Put: %q %v", where, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %04o, want 0600", fi.Mode().Perm())
	}
	var doc struct {
		Warning string            `json:"warning"`
		Secrets map[string]string `json:"secrets"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Warning, "less protected") || doc.Secrets["openai"] != "sk-file-1" {
		t.Fatalf("file content: %s", b)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "less protected") || !strings.Contains(l, path) || strings.Contains(l, "sk-file-1") {
		t.Fatalf("log must warn, name the file and never show the key: %s", l)
	}

	v, where, err := s.Lookup("openai")
	if err != nil || v != "sk-file-1" || where != secrets.InFile {
		t.Fatalf("Lookup: %q %q %v", v, where, err)
	}
	env["JARVIS_SECRET_OPENAI"] = "sk-env"
	if v, where, err := s.Lookup("openai"); err != nil || v != "sk-env" || where != secrets.InEnv {
		t.Fatalf("env override: %q %q %v", v, where, err)
	}
	delete(env, "JARVIS_SECRET_OPENAI")

	// A second key keeps the first; Delete removes only its own.
	if err := s.Set("roundtable-a", "rt-key"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("openai"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("openai"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
	if v, _ := s.Get("roundtable-a"); v != "rt-key" {
		t.Fatalf("the other key: %q", v)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after rewrite %04o", fi.Mode().Perm())
	}
}

// A fallback file others can read is refused with a way out, not used.
func TestFileFallbackRefusesOpenMode(t *testing.T) {
	noKeyring(t)
	path := filepath.Join(t.TempDir(), "secrets.json")
	s := secrets.New(func(string) string { return "" }, secrets.WithFile(path, nil))
	if err := s.Set("openai", "sk-1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get("openai")
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Get of a 0644 file: %v", err)
	}
	if err := s.Set("other", "v"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Set into a 0644 file: %v", err)
	}
}

// Without a fallback file the keyring-only behaviour stays: Set fails.
func TestNoFallbackStillFails(t *testing.T) {
	noKeyring(t)
	s := secrets.New(func(string) string { return "" })
	if _, err := s.Put("openai", "v"); err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Put: %v", err)
	}
}

// With a real keyring (make test's private Secret Service) the keyring is
// used and a copy left in the fallback file from a keyring-less day is removed.
func TestKeyringPreferredOverFile(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Skip("no D-Bus session bus: run through scripts/with-session-bus.sh (make test does)")
	}
	path := filepath.Join(t.TempDir(), "secrets.json")
	ref := "jarvis-test-file-migrate"
	bus := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	s := secrets.New(func(string) string { return "" }, secrets.WithFile(path, nil))
	if where, err := s.Put(ref, "old"); err != nil || where != secrets.InFile {
		t.Fatalf("keyring-less Put: %q %v", where, err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", bus)
	defer s.Delete(ref)
	if where, err := s.Put(ref, "new"); err != nil || where != secrets.InKeyring {
		t.Fatalf("Put with a keyring: %q %v", where, err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), ref) {
		t.Fatalf("the file still holds the key: %s", b)
	}
	if v, where, err := s.Lookup(ref); err != nil || v != "new" || where != secrets.InKeyring {
		t.Fatalf("Lookup: %q %q %v", v, where, err)
	}
}
