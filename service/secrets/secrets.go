// Package secrets resolves secret references (API keys, agent secrets) named
// in the configuration. Values live in the OS keyring (go-keyring, service
// "jarvis"); an environment variable JARVIS_SECRET_<REF> overrides it for
// headless use. Where no keyring answers (a headless box, a desktop without a
// Secret Service) and the Store has a fallback file (WithFile), values go to
// that file instead, mode 0600 and marked as less protected, with a warning
// in the log (file.go). Values are never logged.
//
// Safe for concurrent use.
package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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
	file    *fileStore // nil: no fallback, the keyring or nothing
}

// Option configures New.
type Option func(*Store)

// WithFile makes path the fallback for a keyring that cannot be reached:
// Set writes there (and warns on log) when the keyring refuses, Get reads
// there when the keyring has nothing or does not answer.
func WithFile(path string, log *slog.Logger) Option {
	return func(s *Store) {
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		s.file = &fileStore{path: path, log: log}
	}
}

// New returns a Store reading the environment through getenv.
func New(getenv func(string) string, opts ...Option) *Store {
	s := &Store{getenv: getenv, timeout: 3 * time.Second}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Where a secret was found (Lookup).
const (
	InEnv     = "env"
	InKeyring = "keyring"
	InFile    = "file" // the fallback file: less protected than the keyring
)

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
	v, _, err := s.Lookup(ref)
	return v, err
}

// Lookup returns the secret named ref and where it was found (InEnv,
// InKeyring or InFile): the environment wins, then the keyring, then the
// fallback file.
func (s *Store) Lookup(ref string) (value, where string, err error) {
	if ref == "" {
		return "", "", ErrNotFound
	}
	if v := s.getenv(EnvName(ref)); v != "" {
		return v, InEnv, nil
	}
	v, kerr := s.withTimeout(func() (string, error) { return keyring.Get(KeyringService, ref) })
	if kerr == nil {
		return v, InKeyring, nil
	}
	if s.file != nil {
		v, ok, ferr := s.file.get(ref)
		if ferr != nil {
			return "", "", fmt.Errorf("%w: %q: %v", ErrNotFound, ref, ferr)
		}
		if ok {
			return v, InFile, nil
		}
	}
	if errors.Is(kerr, keyring.ErrNotFound) {
		return "", "", fmt.Errorf("%w: %q is not in the OS keyring and %s is not set", ErrNotFound, ref, EnvName(ref))
	}
	return "", "", fmt.Errorf("%w: %q: the OS keyring is unavailable (%v) and %s is not set", ErrNotFound, ref, kerr, EnvName(ref))
}

// Set stores a secret in the OS keyring, or, when the keyring cannot take
// it and the Store has a fallback file, in that file (where reports which).
func (s *Store) Set(ref, value string) error {
	_, err := s.Put(ref, value)
	return err
}

// Put is Set that also says where the value went (InKeyring or InFile).
func (s *Store) Put(ref, value string) (where string, err error) {
	_, err = s.withTimeout(func() (string, error) { return "", keyring.Set(KeyringService, ref, value) })
	if err == nil {
		if s.file != nil {
			// The keyring has it now: no less protected copy stays behind.
			if derr := s.file.delete(ref); derr != nil {
				return InKeyring, derr
			}
		}
		return InKeyring, nil
	}
	if s.file == nil {
		return "", fmt.Errorf("storing %q in the OS keyring: %w", ref, err)
	}
	if ferr := s.file.set(ref, value); ferr != nil {
		return "", fmt.Errorf("storing %q: the OS keyring is unavailable (%v) and the fallback file failed: %w", ref, err, ferr)
	}
	s.file.log.Warn("no OS keyring: secret stored in a file, less protected than a keyring (readable by anything running as you)",
		"ref", ref, "file", s.file.path, "keyring_error", err.Error(), "override", EnvName(ref))
	return InFile, nil
}

// Delete removes a secret from the OS keyring and the fallback file.
func (s *Store) Delete(ref string) error {
	_, err := s.withTimeout(func() (string, error) { return "", keyring.Delete(KeyringService, ref) })
	if s.file != nil {
		if ferr := s.file.delete(ref); ferr != nil {
			return ferr
		}
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return nil // the keyring is unavailable: the file was the only store
		}
	}
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return err
	}
	return nil
}

// FilePath is the fallback file ("" without one).
func (s *Store) FilePath() string {
	if s.file == nil {
		return ""
	}
	return s.file.path
}
