package testpeer

import (
	"errors"
	"sync"
)

// Secrets is an in-memory stand-in for the OS keyring, for tests that give
// the service secrets (Get) or let it store some (Set, Delete: round-table
// keys). Safe for concurrent use.
type Secrets struct {
	mu sync.Mutex
	m  map[string]string
}

// NewSecrets returns a store holding a copy of initial (which may be nil).
func NewSecrets(initial map[string]string) *Secrets {
	s := &Secrets{m: map[string]string{}}
	for k, v := range initial {
		s.m[k] = v
	}
	return s
}

// Get returns the secret named ref.
func (s *Secrets) Get(ref string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[ref]; ok {
		return v, nil
	}
	return "", errors.New("secret not found")
}

// Set stores a secret.
func (s *Secrets) Set(ref, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[ref] = v
	return nil
}

// Delete removes a secret.
func (s *Secrets) Delete(ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, ref)
	return nil
}

// Has reports whether ref is stored, and its value.
func (s *Secrets) Has(ref string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[ref]
	return v, ok
}
