// Package idempotency remembers the Idempotency-Keys of chat messages and
// tool results, so that a request sent twice gets the first one's outcome.
package idempotency

import (
	"net/http"
	"sync"
	"time"

	"jarvis/service/httpapi"
	"jarvis/service/turn"
)

// A client sends a POST twice when its connection died
// before the answer came (Go's Transport does so by itself for a request
// with an Idempotency-Key, and the desktop's api.Client gives every POST
// one). For chat messages and tool results the service remembers each key
// it saw, per session, for replayWindow: the second request with the same
// key gets the first one's outcome (the same turn, its stream or its reply;
// the same tool-result answer) and never a second turn or result. Keys live
// in memory: a retry comes seconds after its first attempt, and a service
// restart ends every running turn and tool wait anyway.

const (
	replayWindow     = 10 * time.Minute
	maxIdempotentKey = 256
)

// Replays holds the keys seen in the last replayWindow. The zero value is ready.
type Replays struct {
	mu        sync.Mutex
	m         map[replayKey]*Slot
	lastPrune time.Time
}

type replayKey struct{ session, route, key string }

// Slot is the first request's outcome; ready is closed once it is known.
type Slot struct {
	ready   chan struct{}
	at      time.Time
	subject string     // what the key was used for: the message text, the tool call id
	Turn    *turn.Turn // chat: the turn the message started
	err     error      // the first request's refusal, or nil
}

// Key returns the request's Idempotency-Key ("" when none).
func Key(r *http.Request) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if len(k) > maxIdempotentKey {
		return "", httpapi.Errorf(http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key is longer than %d bytes", maxIdempotentKey).With("field", "Idempotency-Key")
	}
	return k, nil
}

// Claim returns the slot of (session, route, key) and whether this request
// is the first with it; the first must settle the slot.
func (rs *Replays) Claim(session, route, key, subject string, now time.Time) (*Slot, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[replayKey]*Slot{}
	}
	if now.Sub(rs.lastPrune) > time.Minute {
		rs.lastPrune = now
		for k, sl := range rs.m {
			if now.Sub(sl.at) > replayWindow {
				delete(rs.m, k)
			}
		}
	}
	k := replayKey{session, route, key}
	if sl, ok := rs.m[k]; ok {
		return sl, false
	}
	sl := &Slot{ready: make(chan struct{}), at: now, subject: subject}
	rs.m[k] = sl
	return sl, true
}

// Settle records the first request's outcome.
func (sl *Slot) Settle(t *turn.Turn, err error) {
	sl.Turn, sl.err = t, err
	close(sl.ready)
}

// Await waits for the first request's outcome of a replayed key; a key
// reused for something else is refused.
func (sl *Slot) Await(r *http.Request, subject string) error {
	if sl.subject != subject {
		return httpapi.Errorf(http.StatusConflict, "idempotency_key_reused", "this Idempotency-Key was already used for another request; use a new key for a new request").With("field", "Idempotency-Key")
	}
	select {
	case <-sl.ready:
		return sl.err
	case <-r.Context().Done():
		return r.Context().Err()
	}
}
