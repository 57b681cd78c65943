package proxy

import (
	"sync"
	"time"
)

// HealthState is what the desktop's status indicator shows for an agent.
type HealthState string

const (
	HealthUnknown HealthState = "unknown" // never called since start
	HealthHealthy HealthState = "healthy" // the last call succeeded
	HealthFailing HealthState = "failing" // the last call failed
)

// Health is an agent's health as of its last call.
type Health struct {
	State     HealthState `json:"state"`
	LastError string      `json:"lastError,omitempty"`
	// LastChecked is when the last call ended; zero while unknown.
	LastChecked time.Time `json:"lastChecked,omitzero"`
	// LastSuccess is when a call last succeeded.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Failures counts consecutive failed calls.
	Failures int `json:"failures"`
}

// HealthTracker records the outcome of calls per agent key. It is safe for
// concurrent use; the Client records into it after every call.
type HealthTracker struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]Health
}

// NewHealthTracker returns an empty tracker; now defaults to time.Now.
func NewHealthTracker(now func() time.Time) *HealthTracker {
	if now == nil {
		now = time.Now
	}
	return &HealthTracker{now: now, m: make(map[string]Health)}
}

// Record notes the outcome of a call to the agent key: err == nil is a
// success.
func (h *HealthTracker) Record(key string, err error) {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[key]
	s.LastChecked = t
	if err == nil {
		s.State, s.LastError, s.LastSuccess, s.Failures = HealthHealthy, "", t, 0
	} else {
		s.State, s.LastError = HealthFailing, err.Error()
		s.Failures++
	}
	h.m[key] = s
}

// Get returns the health of key; an agent never called is HealthUnknown.
func (h *HealthTracker) Get(key string) Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.m[key]
	if !ok {
		return Health{State: HealthUnknown}
	}
	return s
}

// Forget drops key, e.g. when its definition changed or was deleted.
func (h *HealthTracker) Forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}
