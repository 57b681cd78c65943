package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/api"
)

// Connection states of a session stream, as the UI shows them.
const (
	StateConnecting   = "connecting"
	StateLive         = "live"
	StateReconnecting = "reconnecting"
	StateClosed       = "closed"
)

// StreamState is the data of the "stream:state" event.
type StreamState struct {
	SessionID string `json:"sessionId"`
	State     string `json:"state"`
	Attempt   int    `json:"attempt"`
	RetryInMS int64  `json:"retryInMs,omitempty"`
	Error     string `json:"error,omitempty"`
	LastID    string `json:"lastEventId,omitempty"`
}

// FollowOptions configures a follower. Zero values take the docs/protocols/service-api.md defaults.
type FollowOptions struct {
	FirstRetry time.Duration // first reconnect delay; default 1 s
	MaxRetry   time.Duration // backoff cap; default 30 s
	Silence    time.Duration // no byte for this long means dead; default 30 s
	// Sleep waits d or until ctx ends; tests replace it. Default a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o *FollowOptions) fill() {
	if o.FirstRetry <= 0 {
		o.FirstRetry = time.Second
	}
	if o.MaxRetry <= 0 {
		o.MaxRetry = 30 * time.Second
	}
	if o.Silence <= 0 {
		o.Silence = 30 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// follower keeps one session's event stream open: it reconnects with
// exponential backoff, treats a silent connection as dead, and resumes with
// Last-Event-ID so that each event reaches onEvent exactly once, in order.
//
// Concurrency: run is the only goroutine that calls onEvent and onState.
type follower struct {
	c         *api.Client
	sessionID string
	opts      FollowOptions
	onEvent   func(api.StreamEvent)
	onState   func(StreamState)

	lastID  string // id of the last event delivered ("" before the first)
	lastSeq int64  // numeric form of lastID, -1 when unknown
}

func newFollower(c *api.Client, sessionID, lastID string, opts FollowOptions, onEvent func(api.StreamEvent), onState func(StreamState)) *follower {
	opts.fill()
	f := &follower{c: c, sessionID: sessionID, opts: opts, onEvent: onEvent, onState: onState, lastID: lastID, lastSeq: -1}
	if n, err := strconv.ParseInt(lastID, 10, 64); err == nil {
		f.lastSeq = n
	}
	return f
}

// errSilent ends a connection that carried no byte for the silence limit.
var errSilent = errors.New("stream silent: no event or heartbeat")

// run follows the stream until ctx ends.
func (f *follower) run(ctx context.Context) {
	attempt := 0
	for {
		state := StateConnecting
		if attempt > 0 {
			state = StateReconnecting
		}
		f.onState(StreamState{SessionID: f.sessionID, State: state, Attempt: attempt, LastID: f.lastID})
		gotData, err := f.once(ctx)
		if ctx.Err() != nil {
			f.onState(StreamState{SessionID: f.sessionID, State: StateClosed, LastID: f.lastID})
			return
		}
		var se *api.StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			// The session is gone (deleted elsewhere): nothing to follow.
			f.onState(StreamState{SessionID: f.sessionID, State: StateClosed, Error: se.Err.Message, LastID: f.lastID})
			return
		}
		if gotData {
			attempt = 0 // a connection that worked resets the backoff
		}
		attempt++
		delay := backoff(f.opts.FirstRetry, f.opts.MaxRetry, attempt)
		msg := "stream ended"
		if err != nil {
			msg = err.Error()
		}
		f.onState(StreamState{SessionID: f.sessionID, State: StateReconnecting, Attempt: attempt, RetryInMS: delay.Milliseconds(), Error: msg, LastID: f.lastID})
		if f.opts.Sleep(ctx, delay) != nil {
			f.onState(StreamState{SessionID: f.sessionID, State: StateClosed, LastID: f.lastID})
			return
		}
	}
}

// backoff is first·2^(attempt-1), capped.
func backoff(first, max time.Duration, attempt int) time.Duration {
	d := first
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// once runs one connection; gotData reports whether any event arrived.
func (f *follower) once(ctx context.Context) (gotData bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	live := false
	act := &activity{connected: func() {
		// The stream is open once the service answers 200, before any
		// event: an idle session carries only heartbeats.
		if !live {
			live = true
			f.onState(StreamState{SessionID: f.sessionID, State: StateLive, LastID: f.lastID})
		}
	}}
	act.touch()
	ctx = withActivity(ctx, act)
	// The watchdog ends a connection whose body has been silent too long;
	// heartbeat comments count as bytes even though the SSE parser hides them.
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(max(f.opts.Silence/10, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if act.idle() >= f.opts.Silence {
					cancel(errSilent)
					return
				}
			}
		}
	}()
	err = f.c.Stream(ctx, f.sessionID, f.lastID, func(ev api.StreamEvent) error {
		act.connected()
		gotData = true
		// A replay can never go backwards; drop anything already delivered.
		if n, perr := strconv.ParseInt(ev.ID, 10, 64); perr == nil && ev.Type != api.EventReset {
			if f.lastSeq >= 0 && n <= f.lastSeq {
				return nil
			}
			f.lastSeq = n
		} else if ev.Type == api.EventReset {
			f.lastSeq, _ = strconv.ParseInt(ev.ID, 10, 64)
		}
		if ev.ID != "" {
			f.lastID = ev.ID
		}
		f.onEvent(ev)
		return nil
	})
	if c := context.Cause(ctx); errors.Is(c, errSilent) {
		return gotData, errSilent
	}
	if err == nil {
		err = io.EOF
	}
	return gotData, err
}

// activity notes when a connection last carried a byte. connected is
// called (on the caller's goroutine, inside the request) when the service
// answers 2xx.
type activity struct {
	last      atomic.Int64
	connected func()
}

func (a *activity) touch()              { a.last.Store(time.Now().UnixNano()) }
func (a *activity) idle() time.Duration { return time.Duration(time.Now().UnixNano() - a.last.Load()) }

type activityKey struct{}

func withActivity(ctx context.Context, a *activity) context.Context {
	return context.WithValue(ctx, activityKey{}, a)
}

// activityTransport wraps the response body of requests whose context
// carries an *activity in a reader that touches it on every byte read.
type activityTransport struct{ base http.RoundTripper }

func (t activityTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if a, ok := req.Context().Value(activityKey{}).(*activity); ok {
		a.touch()
		resp.Body = &activityReader{rc: resp.Body, a: a}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 && a.connected != nil {
			a.connected()
		}
	}
	return resp, nil
}

type activityReader struct {
	rc io.ReadCloser
	a  *activity
}

func (r *activityReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if n > 0 {
		r.a.touch()
	}
	return n, err
}

func (r *activityReader) Close() error { return r.rc.Close() }

// followers is the set of session streams the app follows.
type followers struct {
	mu sync.Mutex
	m  map[string]context.CancelFunc
	// last is each followed session's newest stream state, told again when
	// the session is opened (the page may not have listened when it came).
	last map[string]StreamState
	wg   sync.WaitGroup
}

// saw records a session's newest stream state.
func (fs *followers) saw(st StreamState) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.last == nil {
		fs.last = map[string]StreamState{}
	}
	fs.last[st.SessionID] = st
}

// state is a followed session's newest stream state.
func (fs *followers) state(id string) (StreamState, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	st, ok := fs.last[id]
	return st, ok
}

func (fs *followers) start(parent context.Context, f *follower) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	// Shutdown cancels parent before stopAll: a follower asked for after
	// that would run unwaited, and its wg.Add would race stopAll's Wait.
	if parent.Err() != nil {
		return
	}
	if fs.m == nil {
		fs.m = map[string]context.CancelFunc{}
	}
	if _, ok := fs.m[f.sessionID]; ok {
		return
	}
	ctx, cancel := context.WithCancel(parent)
	fs.m[f.sessionID] = cancel
	fs.wg.Add(1)
	go func() {
		defer fs.wg.Done()
		f.run(ctx)
	}()
}

func (fs *followers) has(id string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, ok := fs.m[id]
	return ok
}

func (fs *followers) stop(id string) {
	fs.mu.Lock()
	cancel := fs.m[id]
	delete(fs.m, id)
	delete(fs.last, id)
	fs.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (fs *followers) stopAll() {
	fs.mu.Lock()
	for id, c := range fs.m {
		c()
		delete(fs.m, id)
	}
	fs.last = nil
	fs.mu.Unlock()
	fs.wg.Wait()
}
