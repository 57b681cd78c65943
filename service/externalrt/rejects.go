package externalrt

// The audit of rejected external callbacks, rate-limited and aggregated:
// anyone on the machine can post to the callback route, and one
// external_audit row per rejected attempt let a loop write about 1 MB/s.

import (
	"context"
	"sync"
	"time"

	"jarvis/service/store"
)

const (
	// rejectWindow is the aggregation window of rejected callbacks.
	rejectWindow = time.Minute
	// rejectSingles rejected callbacks of a kind (session, agent, auth,
	// reason) are audited one row each per window; the rest of the window's
	// attempts of that kind become one row with their count.
	rejectSingles = 5
	// rejectKinds caps the kinds counted apart in a window (session ids in
	// the URL are the caller's choice); further kinds share one row.
	rejectKinds = 64
	// externalAuditKeep is the retention cap of external_audit, in rows.
	externalAuditKeep = 20000
)

// rejectKey is a kind of rejected callback.
type rejectKey struct{ session, agent, auth, reason string }

// otherRejects counts the kinds beyond rejectKinds.
var otherRejects = rejectKey{session: "*", auth: "failed", reason: "other rejected callbacks"}

type rejectCount struct {
	seen  int64 // attempts this window
	extra int64 // attempts past the singles, not yet stored
	bytes int64 // their body sizes
}

// rejectAudit holds the current window's counts.
type rejectAudit struct {
	mu    sync.Mutex
	start time.Time
	kinds map[rejectKey]*rejectCount
}

// auditRejected audits a callback that was refused: a row of its own while
// its kind has had fewer than rejectSingles this window, else a count.
func (rt *Runtime) auditRejected(a store.ExternalAudit) {
	now := rt.env.Now()
	r := &rt.rejects
	r.mu.Lock()
	var due []store.ExternalAudit
	if r.kinds == nil || now.Sub(r.start) >= rejectWindow {
		due = r.takeLocked()
		r.start = now
	}
	k := rejectKey{a.SessionID, a.AgentID, a.Auth, a.Reason}
	c := r.kinds[k]
	if c == nil && len(r.kinds) >= rejectKinds {
		k = otherRejects
		c = r.kinds[k]
	}
	if c == nil {
		c = &rejectCount{}
		r.kinds[k] = c
	}
	c.seen++
	single := c.seen <= rejectSingles && k != otherRejects
	if !single {
		c.extra++
		c.bytes += a.Bytes
	}
	r.mu.Unlock()
	rt.storeRejectCounts(due)
	if single {
		rt.auditExternal(a, true)
	}
	rt.pruneExternal()
}

// takeLocked returns the window's counts as audit rows and starts afresh.
func (r *rejectAudit) takeLocked() []store.ExternalAudit {
	var out []store.ExternalAudit
	for k, c := range r.kinds {
		if c.extra > 0 {
			out = append(out, store.ExternalAudit{SessionID: k.session, AgentID: k.agent, Auth: k.auth,
				Reason: k.reason, Bytes: c.bytes, Attempts: c.extra})
		}
	}
	r.kinds = map[rejectKey]*rejectCount{}
	return out
}

// flushRejects stores the counts of a window that has ended (all of them
// when final is set: at Close).
func (rt *Runtime) FlushRejects(final bool) {
	r := &rt.rejects
	r.mu.Lock()
	var due []store.ExternalAudit
	if final || (r.kinds != nil && rt.env.Now().Sub(r.start) >= rejectWindow) {
		due = r.takeLocked()
	}
	r.mu.Unlock()
	rt.storeRejectCounts(due)
}

func (rt *Runtime) storeRejectCounts(rows []store.ExternalAudit) {
	if len(rows) == 0 {
		return
	}
	for _, a := range rows {
		rt.env.Log.Warn("external callbacks rejected", "session", a.SessionID, "agent", a.AgentID, "auth", a.Auth,
			"reason", a.Reason, "attempts", a.Attempts, "bytes", a.Bytes, "window", rejectWindow)
	}
	if err := rt.env.Store.AddExternalAudits(context.Background(), rows); err != nil {
		rt.env.Log.Error("store external audit counts", "err", err)
	}
}

// FlushRejectsEvery writes each window's counts of rejected callbacks when
// it ends, and prunes old audit rows, until closing is closed.
func (rt *Runtime) FlushRejectsEvery(closing <-chan struct{}) {
	t := time.NewTicker(rejectWindow)
	defer t.Stop()
	for {
		select {
		case <-closing:
			return
		case <-t.C:
			rt.FlushRejects(false)
			rt.pruneExternal()
		}
	}
}
