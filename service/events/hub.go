// Package events owns a session's event stream: every event is stored in
// SQLite with a per-session sequence number (its SSE id) before any
// subscriber sees it, so a client that reconnects with Last-Event-ID can be
// given exactly what it missed, in order, even after a restart.
//
// Concurrency: one writer goroutine assigns sequence numbers, stores events
// in batches (one transaction per batch, which is what lets a 10,000-delta
// stream keep up with its upstream) and then fans them out. Publish only
// enqueues; PublishWait also waits until the event is stored. Live delivery
// to a subscriber may drop events when the subscriber is slow, never silently:
// Follow notices the gap and reads the missing events back from the store, so
// every event reaches every follower exactly once and in order.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/service/store"
)

// Event is one published event.
type Event struct {
	SessionID string          `json:"-"`
	Seq       int64           `json:"-"`
	Type      string          `json:"-"`
	Data      json.RawMessage `json:"-"`
}

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("event hub closed")

// ErrStop, returned by a Follow callback, ends Follow without error.
var ErrStop = errors.New("stop following")

type item struct {
	ev    Event
	write store.Write // stored in the same transaction as the event, or nil
	ack   chan ack    // nil when nobody waits
	after func()      // called once the event is stored (or failed to be), before anyone sees it; or nil
}

type ack struct {
	seq int64
	err error
}

// Hub stores and fans out session events.
type Hub struct {
	st     *store.Store
	log    *slog.Logger
	now    func() time.Time
	redact func([]byte) []byte // Options.Redact

	in      chan item
	quit    chan struct{}
	stopped chan struct{}
	once    sync.Once

	mu   sync.Mutex
	subs map[string]map[*sub]struct{}
	// fanned is the newest seq handed to subscribers, per session that
	// published since the hub started: a follower that already has it
	// needs no read of the store to catch up.
	fanned map[string]int64

	// writing serialises storing: the writer goroutine holds it for a
	// batch, and PublishWith holds it to store an event itself when nothing
	// is queued or in flight (it saves two goroutine hand-offs on a turn's
	// start and end, and cannot reorder anything: there is nothing before it).
	writing  sync.Mutex
	inFlight atomic.Int64     // events enqueued and not yet stored
	lastSeq  map[string]int64 // guarded by writing
}

// Options configures a Hub.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	Queue  int // enqueue capacity before Publish blocks; default 8192
	// Redact, when set, is applied to every event's JSON data before it is
	// stored or fanned out (the service removes secret values with it).
	Redact func([]byte) []byte
}

// New starts a hub writing to st.
func New(st *store.Store, opts Options) *Hub {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Queue <= 0 {
		opts.Queue = 8192
	}
	h := &Hub{st: st, log: opts.Logger, now: opts.Now, redact: opts.Redact, in: make(chan item, opts.Queue),
		quit: make(chan struct{}), stopped: make(chan struct{}),
		subs: map[string]map[*sub]struct{}{}, fanned: map[string]int64{}, lastSeq: map[string]int64{}}
	go h.run()
	return h
}

// Close stores what was enqueued and stops the hub.
func (h *Hub) Close() {
	h.once.Do(func() { close(h.quit) })
	<-h.stopped
}

// redactItems applies Options.Redact to the items' data.
func (h *Hub) redactItems(its []item) {
	if h.redact == nil {
		return
	}
	for i := range its {
		its[i].ev.Data = h.redact(its[i].ev.Data)
	}
}

// Draft is an event to publish ahead of another (PublishAfter).
type Draft struct {
	Type string
	Data any
}

// items marshals lead and (typ, data) into queue items for one session; the
// last carries write and acks.
func items(sessionID string, lead []Draft, typ string, data any, write store.Write, acks chan ack, after func()) ([]item, error) {
	its := make([]item, 0, len(lead)+1)
	for _, d := range append(lead, Draft{Type: typ, Data: data}) {
		raw, err := json.Marshal(d.Data)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", d.Type, err)
		}
		its = append(its, item{ev: Event{SessionID: sessionID, Type: d.Type, Data: raw}})
	}
	its[len(its)-1].write, its[len(its)-1].ack, its[len(its)-1].after = write, acks, after
	return its, nil
}

func (h *Hub) enqueue(ctx context.Context, sessionID, typ string, data any, write store.Write, acks chan ack) error {
	its, err := items(sessionID, nil, typ, data, write, acks, nil)
	h.redactItems(its)
	if err != nil {
		return err
	}
	return h.send(ctx, its, true)
}

// send queues its for the writer; yield lets the writer run at once when it
// was idle, on this core (see below).
func (h *Hub) send(ctx context.Context, its []item, yield bool) error {
	select {
	case <-h.quit:
		return ErrClosed
	default:
	}
	idle := len(h.in) == 0
	for i, it := range its {
		h.inFlight.Add(1)
		select {
		case h.in <- it:
		case <-h.quit:
			h.inFlight.Add(-1)
			return ErrClosed
		case <-ctx.Done():
			h.inFlight.Add(-1)
			if i > 0 {
				return fmt.Errorf("%w (after %d of %d events)", ctx.Err(), i, len(its))
			}
			return ctx.Err()
		}
	}
	if idle && yield {
		// The writer was waiting: let it run now. A producer that does not
		// block (a model streaming deltas) would otherwise keep this core
		// until preemption, up to 10 ms, and hold back the first event.
		runtime.Gosched()
	}
	return nil
}

// Publish enqueues an event; it is stored and delivered in enqueue order.
func (h *Hub) Publish(ctx context.Context, sessionID, typ string, data any) error {
	return h.enqueue(ctx, sessionID, typ, data, nil, nil)
}

// PublishWait enqueues an event and waits until it (and everything enqueued
// before it) is stored. It returns the event's seq.
func (h *Hub) PublishWait(ctx context.Context, sessionID, typ string, data any) (int64, error) {
	return h.PublishWith(ctx, sessionID, typ, data, nil)
}

// PublishWith is PublishWait with a write stored in the same transaction as
// the event. When the write fails, the event is not published and its error
// is returned.
func (h *Hub) PublishWith(ctx context.Context, sessionID, typ string, data any, write store.Write) (int64, error) {
	return h.PublishAfter(ctx, sessionID, nil, typ, data, write, nil)
}

// PublishAfter is PublishWith preceded by the lead events, published in
// order and stored with it in one transaction when nothing else is queued.
// A failed write withholds only the last event. after, when not nil, is
// called once the write is stored or has failed, before any subscriber sees
// the events (not at all when publishing fails: see the error).
func (h *Hub) PublishAfter(ctx context.Context, sessionID string, lead []Draft, typ string, data any, write store.Write, after func()) (int64, error) {
	acks := make(chan ack, 1)
	its, err := items(sessionID, lead, typ, data, write, acks, after)
	h.redactItems(its)
	if err != nil {
		return 0, err
	}
	if h.storeNow(its) {
		return h.await(acks)
	}
	if err := h.send(ctx, its, true); err != nil {
		return 0, err
	}
	return h.await(acks)
}

// Begin enqueues an event and its write like PublishWith and returns at
// once; wait waits until they are stored (or not: its error) and returns
// the event's seq. Whatever is published after Begin returns is stored
// after it.
func (h *Hub) Begin(ctx context.Context, sessionID, typ string, data any, write store.Write) (wait func() (int64, error), err error) {
	acks := make(chan ack, 1)
	its, err := items(sessionID, nil, typ, data, write, acks, nil)
	h.redactItems(its)
	if err != nil {
		return nil, err
	}
	// No yield: the caller has work to do meanwhile (a model call), and
	// another core takes the writer.
	if err := h.send(ctx, its, false); err != nil {
		return nil, err
	}
	return sync.OnceValues(func() (int64, error) { return h.await(acks) }), nil
}

func (h *Hub) await(acks chan ack) (int64, error) {
	select {
	case a := <-acks:
		return a.seq, a.err
	case <-h.stopped:
		select {
		case a := <-acks:
			return a.seq, a.err
		default:
			return 0, ErrClosed
		}
	}
}

// storeNow stores its in the caller's goroutine when no other event is
// queued or in flight (it saves two goroutine hand-offs on a turn's end,
// and cannot reorder anything: there is nothing before it); false when it
// did nothing.
func (h *Hub) storeNow(its []item) bool {
	if h.inFlight.Load() != 0 || !h.writing.TryLock() {
		return false
	}
	defer h.writing.Unlock()
	if h.inFlight.Load() != 0 {
		return false
	}
	select {
	case <-h.quit:
		return false
	default:
	}
	h.flush(its)
	return true
}

func (h *Hub) run() {
	defer close(h.stopped)
	batch := make([]item, 0, 512)
	for {
		var first item
		select {
		case first = <-h.in:
		case <-h.quit:
			// Drain what was enqueued before Close.
			for {
				select {
				case it := <-h.in:
					batch = append(batch[:0], it)
					h.writing.Lock()
					h.flush(batch)
					h.inFlight.Add(-1)
					h.writing.Unlock()
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	drain:
		for len(batch) < cap(batch) {
			select {
			case it := <-h.in:
				batch = append(batch, it)
			default:
				break drain
			}
		}
		h.writing.Lock()
		h.flush(batch)
		h.inFlight.Add(-int64(len(batch)))
		h.writing.Unlock()
	}
}

func (h *Hub) flush(batch []item) {
	ctx := context.Background()
	now := store.Timestamp(h.now())
	rows := make([]store.EventWrite, len(batch))
	for i, it := range batch {
		rows[i] = store.EventWrite{Event: store.Event{SessionID: it.ev.SessionID, Type: it.ev.Type, Data: string(it.ev.Data), CreatedAt: now}, Write: it.write}
	}
	assigned := map[string]int64{}
	nextSeq := func(sid string, stored func() (int64, error)) int64 {
		seq, ok := assigned[sid]
		if !ok {
			if seq, ok = h.lastSeq[sid]; !ok {
				n, err := stored()
				if err != nil {
					h.log.Error("event seq lookup failed", "session", sid, "err", err)
				}
				seq = n
			}
		}
		assigned[sid] = seq + 1
		return seq + 1
	}
	errs, err := h.st.AppendEvents(ctx, rows, nextSeq)
	for _, it := range batch {
		if it.after != nil {
			it.after()
		}
	}
	if err != nil {
		// Not stored means not published: a live-only event could never be
		// replayed. Forget the cached seqs so the next batch re-reads them.
		h.log.Error("storing events failed", "events", len(rows), "err", err)
		for sid := range assigned {
			delete(h.lastSeq, sid)
		}
	} else {
		for sid, seq := range assigned {
			h.lastSeq[sid] = seq
		}
		for i := range batch {
			batch[i].ev.Seq = rows[i].Seq
		}
		if h.fanout(batch, errs) {
			runtime.Gosched() // likewise, let the followers write what was just fanned out
		}
	}
	for i, it := range batch {
		if it.ack != nil {
			e := err
			if e == nil {
				e = errs[i]
			}
			it.ack <- ack{seq: it.ev.Seq, err: e}
		}
	}
}

type sub struct {
	ch     chan Event
	lagged chan struct{} // closed once when an event could not be delivered
	lag    sync.Once
}

// fanout hands the stored batch to its sessions' subscribers and reports
// whether it handed any.
func (h *Hub) fanout(batch []item, errs []error) (handed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, it := range batch {
		if errs != nil && errs[i] != nil {
			continue
		}
		h.fanned[it.ev.SessionID] = it.ev.Seq
		for s := range h.subs[it.ev.SessionID] {
			select {
			case s.ch <- it.ev:
				handed = true
			default:
				s.lag.Do(func() { close(s.lagged) })
			}
		}
	}
	return handed
}

// subscribe registers a subscriber and reports whether every stored event
// of the session after seq after is still to be fanned out to it (so that
// reading the store would find nothing).
func (h *Hub) subscribe(sessionID string, after int64) (s *sub, current bool) {
	s = &sub{ch: make(chan Event, 1024), lagged: make(chan struct{})}
	h.mu.Lock()
	if h.subs[sessionID] == nil {
		h.subs[sessionID] = map[*sub]struct{}{}
	}
	h.subs[sessionID][s] = struct{}{}
	newest, ok := h.fanned[sessionID]
	h.mu.Unlock()
	return s, ok && newest <= after
}

func (h *Hub) unsubscribe(sessionID string, s *sub) {
	h.mu.Lock()
	delete(h.subs[sessionID], s)
	if len(h.subs[sessionID]) == 0 {
		delete(h.subs, sessionID)
	}
	h.mu.Unlock()
}

// Queued returns how many events wait to be stored.
func (h *Hub) Queued() int { return len(h.in) }

// Following reports whether some client follows the session's events live.
func (h *Hub) Following(sessionID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[sessionID]) > 0
}

// LastSeq returns the id of the newest stored event of a session.
func (h *Hub) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	return h.st.LastSeq(ctx, sessionID)
}

// FollowOptions configures Follow.
type FollowOptions struct {
	// Idle, when set, is called after IdleEvery without an event (heartbeats).
	Idle      func() error
	IdleEvery time.Duration
	// Flush, when set, is called whenever delivered events are waiting and
	// no further event is immediately available, and during a burst at
	// least every flushEvery or flushBatch events: a fast stream is written
	// in few system calls without holding back its first event, and a slow
	// one is flushed event by event.
	Flush func() error
}

const (
	flushEvery = 2 * time.Millisecond
	flushBatch = 32
)

// Follow calls fn for every event of the session with seq > after: first the
// stored ones, then live ones as they are published, until ctx ends or fn
// returns an error (ErrStop ends it cleanly).
func (h *Hub) Follow(ctx context.Context, sessionID string, after int64, opts FollowOptions, fn func(Event) error) error {
	s, current := h.subscribe(sessionID, after)
	defer func() { h.unsubscribe(sessionID, s) }()
	last := after
	dirty := false
	unflushed := 0
	var lastFlush time.Time // zero: the next event is flushed at once
	flush := func() error {
		dirty, unflushed, lastFlush = false, 0, time.Now()
		return opts.Flush()
	}
	deliver := func(ev Event) error {
		dirty = true
		unflushed++
		err := fn(ev)
		if err == nil {
			last = ev.Seq
			// Within a burst (live or read back from the store), flush
			// the first event at once and then every flushEvery or
			// flushBatch events.
			if opts.Flush != nil && (unflushed >= flushBatch || time.Since(lastFlush) >= flushEvery) {
				first := lastFlush.IsZero()
				if err = flush(); err == nil && first {
					// The client, woken by this write, waits on this
					// core (Linux wakes a socket's reader on the
					// writer's core, expecting the writer to sleep),
					// while the events behind this one keep the
					// process busy: let it read now, not after the
					// time slice.
					yieldCPU()
				}
			}
		} else if errors.Is(err, ErrStop) && opts.Flush != nil {
			opts.Flush()
		}
		return err
	}
	catchUp := func() error {
		for {
			evs, err := h.st.EventsAfter(ctx, sessionID, last, 500)
			if err != nil {
				return err
			}
			for _, e := range evs {
				if err := deliver(Event{SessionID: e.SessionID, Seq: e.Seq, Type: e.Type, Data: json.RawMessage(e.Data)}); err != nil {
					return err
				}
			}
			if len(evs) < 500 {
				return nil
			}
		}
	}
	done := func(err error) error {
		if errors.Is(err, ErrStop) {
			return nil
		}
		return err
	}
	// A follower from the newest event (a streamed chat from its user's
	// message) has nothing to read back: what comes next is fanned out.
	if !current {
		if err := catchUp(); err != nil {
			return done(err)
		}
	}
	var idle <-chan time.Time
	var t *time.Timer
	if opts.Idle != nil && opts.IdleEvery > 0 {
		t = time.NewTimer(opts.IdleEvery)
		defer t.Stop()
		idle = t.C
	}
	resetIdle := func() {
		if t != nil {
			t.Reset(opts.IdleEvery)
		}
	}
	for {
		if len(s.ch) == 0 {
			if dirty && opts.Flush != nil {
				if err := flush(); err != nil {
					return err
				}
			}
			// About to wait: the next event starts a burst, and the first
			// event of a burst goes out at once, even with more behind it.
			lastFlush = time.Time{}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-idle:
			if err := opts.Idle(); err != nil {
				return done(err)
			}
			resetIdle()
		case <-s.lagged:
			// We were too slow and live events were dropped: re-subscribe and
			// read everything after last from the store.
			h.unsubscribe(sessionID, s)
			s, _ = h.subscribe(sessionID, last)
			if err := catchUp(); err != nil {
				return done(err)
			}
			resetIdle()
		case ev := <-s.ch:
			if ev.Seq <= last {
				continue
			}
			if ev.Seq > last+1 {
				if err := catchUp(); err != nil {
					return done(err)
				}
				if ev.Seq <= last {
					continue
				}
			}
			if err := deliver(ev); err != nil {
				return done(err)
			}
			resetIdle()
		}
	}
}
