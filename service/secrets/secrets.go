// Package secrets resolves secret references (API keys, agent secrets) named
// in the configuration. Values live in the OS keyring (go-keyring, service
// "jarvis"); an environment variable JARVIS_SECRET_<REF> overrides it for
// headless use. Values are never logged.
//
// Safe for concurrent use.
package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zalando/go-keyring"
)

// KeyringService is the keyring service name under which secrets are stored.
const KeyringService = "jarvis"

// ErrNotFound means neither the environment nor the keyring has the secret.
var ErrNotFound = errors.New("secret not found")

// Store resolves and stores secrets.
type Store struct {
	getenv  func(string) string
	timeout time.Duration
}

// New returns a Store reading the environment through getenv.
func New(getenv func(string) string) *Store {
	return &Store{getenv: getenv, timeout: 3 * time.Second}
}

// EnvName is the environment variable that overrides the secret ref.
func EnvName(ref string) string {
	var b strings.Builder
	b.WriteString("JARVIS_SECRET_")
	for _, r := range strings.ToUpper(ref) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// errNoBus: on Linux and the BSDs the keyring is the Secret Service on the
// D-Bus session bus. Without a bus, go-keyring's D-Bus library would start
// one of its own (dbus-launch --autolaunch) that outlives this process, one
// more at every start of a headless service; the keyring is unavailable
// instead.
var errNoBus = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist)")

// noBus reports whether the keyring would need a session bus that is not
// there: it looks where godbus looks, in the process environment, before
// godbus would autolaunch one.
func noBus() bool {
	switch runtime.GOOS {
	case "darwin", "ios", "windows", "android":
		return false
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return false
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			return false
		}
	}
	return true
}

// withTimeout runs f, giving up after the store's timeout: a keyring daemon
// that does not answer must not hang a chat turn.
func (s *Store) withTimeout(f func() (string, error)) (string, error) {
	if noBus() {
		return "", errNoBus
	}
	type res struct {
		v   string
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := f(); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(s.timeout):
		return "", fmt.Errorf("keyring did not answer within %s", s.timeout)
	}
}

// Get returns the secret named ref.
func (s *Store) Get(ref string) (string, error) {
	if ref == "" {
		return "", ErrNotFound
	}
	if v := s.getenv(EnvName(ref)); v != "" {
		return v, nil
	}
	v, err := s.withTimeout(func() (string, error) { return keyring.Get(KeyringService, ref) })
	if errors.Is(err, keyring.ErrNotFound) {
		return "", fmt.Errorf("%w: %q is not in the OS keyring and %s is not set", ErrNotFound, ref, EnvName(ref))
	}
	if err != nil {
		return "", fmt.Errorf("%w: %q: the OS keyring is unavailable (%v) and %s is not set", ErrNotFound, ref, err, EnvName(ref))
	}
	return v, nil
}

// Set stores a secret in the OS keyring.
func (s *Store) Set(ref, value string) error {
	_, err := s.withTimeout(func() (string, error) { return "", keyring.Set(KeyringService, ref, value) })
	if err != nil {
		return fmt.Errorf("storing %q in the OS keyring: %w", ref, err)
	}
	return nil
}

// Delete removes a secret from the OS keyring.
func (s *Store) Delete(ref string) error {
	_, err := s.withTimeout(func() (string, error) { return "", keyring.Delete(KeyringService, ref) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return err
	}
	return nil
}
