package events_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"jarvis/service/events"
	"jarvis/service/store"
)

func newHub(t *testing.T) (*events.Hub, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := events.New(st, events.Options{Queue: 64})
	t.Cleanup(func() { h.Close(); st.Close() })
	return h, st
}

// A subscriber too slow for live delivery still gets every event exactly
// once, in order: Follow reads what it missed back from the store.
func TestFollowSlowSubscriberMissesNothing(t *testing.T) {
	h, _ := newHub(t)
	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []int64
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- h.Follow(ctx, "s1", 0, events.FollowOptions{}, func(ev events.Event) error {
			if first {
				first = false
				close(started)
				time.Sleep(50 * time.Millisecond) // fall behind: the live buffer overflows
			}
			var v struct{ I int64 }
			json.Unmarshal(ev.Data, &v)
			if v.I != ev.Seq {
				return fmt.Errorf("event seq %d carries %d", ev.Seq, v.I)
			}
			got = append(got, ev.Seq)
			if len(got) == n {
				return events.ErrStop
			}
			return nil
		})
	}()
	h.Publish(ctx, "s1", "x", map[string]int64{"I": 1})
	<-started
	for i := int64(2); i <= n; i++ {
		if err := h.Publish(ctx, "s1", "x", map[string]int64{"I": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, s)
		}
	}
}

// Seqs are per session and gapless; a write that fails stores no event and
// leaves no gap, and the other events of its batch are stored.
func TestPublishWithFailedWriteLeavesNoGap(t *testing.T) {
	h, st := newHub(t)
	ctx := context.Background()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var w store.Write
			if i%3 == 0 {
				w = func(context.Context, *sql.Tx) error { return boom }
			}
			_, errs[i] = h.PublishWith(ctx, "s", "x", i, w)
		}(i)
	}
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if i%3 == 0 {
			if !errors.Is(err, boom) {
				t.Fatalf("publish %d: %v", i, err)
			}
			failed++
		} else if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	evs, err := st.EventsAfter(ctx, "s", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 10-failed {
		t.Fatalf("%d events stored, want %d", len(evs), 10-failed)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("gap: event %d has seq %d", i, e.Seq)
		}
	}
	// Another session numbers from 1.
	seq, err := h.PublishWait(ctx, "other", "x", 1)
	if err != nil || seq != 1 {
		t.Fatalf("other session seq %d %v", seq, err)
	}
}

// Close stores everything enqueued before it; Publish after Close fails.
func TestCloseFlushes(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := events.New(st, events.Options{})
	for i := 0; i < 500; i++ {
		if err := h.Publish(context.Background(), "s", "x", i); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	if n, _ := st.LastSeq(context.Background(), "s"); n != 500 {
		t.Fatalf("%d events stored before close, want 500", n)
	}
	if err := h.Publish(context.Background(), "s", "x", 1); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
}

// PublishAfter stores the lead events and the last one in order; a failed
// write withholds only the last event and undoes what the write did; the
// after hook runs before any follower sees the events, failed write or not.
func TestPublishAfter(t *testing.T) {
	h, st := newHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	follow := make(chan error, 1)
	go func() {
		follow <- h.Follow(ctx, "s", 0, events.FollowOptions{}, func(ev events.Event) error {
			mu.Lock()
			seen = append(seen, ev.Type)
			mu.Unlock()
			return nil
		})
	}()
	for !h.Following("s") {
		time.Sleep(time.Millisecond)
	}
	boom := errors.New("boom")
	hook := func(want int) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != want {
				t.Errorf("after hook ran when the follower had seen %v", seen)
			}
			seen = append(seen, "after")
		}
	}
	ok := func(context.Context, *sql.Tx) error { return nil }
	seq, err := h.PublishAfter(ctx, "s", []events.Draft{{Type: "delta", Data: "a"}}, "final", "b", ok, hook(0))
	if err != nil || seq != 2 {
		t.Fatalf("seq %d %v", seq, err)
	}
	partial := func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events(session_id, seq, type, data, created_at) VALUES ('leak', 1, 'x', '{}', '')`); err != nil {
			return err
		}
		return boom
	}
	if _, err := h.PublishAfter(ctx, "s", []events.Draft{{Type: "delta", Data: "c"}}, "final", "d", partial, hook(3)); !errors.Is(err, boom) {
		t.Fatalf("failed write: %v", err)
	}
	evs, err := st.EventsAfter(ctx, "s", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("gap: event %d has seq %d", i, e.Seq)
		}
		got = append(got, e.Type+" "+e.Data)
	}
	if fmt.Sprint(got) != `[delta "a" final "b" delta "c"]` {
		t.Fatalf("stored %q", got)
	}
	if leaked, _ := st.EventsAfter(ctx, "leak", 0, 10); len(leaked) != 0 {
		t.Fatalf("the failed write's change was kept: %+v", leaked)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := fmt.Sprint(seen)
		mu.Unlock()
		if n == "[after delta final after delta]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower saw %s", n)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-follow
}

// The first event of a burst is flushed at once, even when more of the
// burst is already queued behind it (a user sees the first words without
// waiting for the rest of the batch); the rest are flushed together.
func TestFollowFlushesTheFirstEventOfABurstAtOnce(t *testing.T) {
	h, _ := newHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	delivered := 0
	var flushedAt []int // events delivered at each flush
	flushed := make(chan struct{}, 16)
	idle := make(chan struct{}, 1) // the follower waits for events
	follow := make(chan error, 1)
	go func() {
		follow <- h.Follow(ctx, "s", 0, events.FollowOptions{IdleEvery: time.Millisecond, Idle: func() error {
			select {
			case idle <- struct{}{}:
			default:
			}
			return nil
		}, Flush: func() error {
			mu.Lock()
			flushedAt = append(flushedAt, delivered)
			mu.Unlock()
			flushed <- struct{}{}
			return nil
		}}, func(ev events.Event) error {
			mu.Lock()
			delivered++
			mu.Unlock()
			if ev.Type == "end" {
				return events.ErrStop
			}
			return nil
		})
	}()
	for !h.Following("s") {
		time.Sleep(time.Millisecond)
	}
	ok := func(context.Context, *sql.Tx) error { return nil }
	if err := h.Publish(ctx, "s", "x", "first"); err != nil {
		t.Fatal(err)
	}
	<-flushed // the first event, alone
	// Forget a wait before it; one after it means the follower is done
	// with it.
	select {
	case <-idle:
	default:
	}
	<-idle
	// A burst, fanned out at once and queued behind its first event,
	// right after a flush.
	burst := []events.Draft{{Type: "x", Data: "b1"}, {Type: "x", Data: "b2"}, {Type: "x", Data: "b3"}, {Type: "x", Data: "b4"}}
	if _, err := h.PublishAfter(ctx, "s", burst, "end", "b5", ok, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-follow; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(flushedAt) < 3 || flushedAt[0] != 1 || flushedAt[1] != 2 || flushedAt[len(flushedAt)-1] != 6 {
		t.Fatalf("flushes after %v events delivered; want 1, then 2 (the burst's first), ..., 6", flushedAt)
	}
}

// A follower that starts at the newest event published gets what comes
// next and nothing twice; one that starts earlier reads the rest back first.
func TestFollowFromTheNewestEvent(t *testing.T) {
	h, _ := newHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 1; i <= 3; i++ {
		if _, err := h.PublishWait(ctx, "s", "x", i); err != nil {
			t.Fatal(err)
		}
	}
	follow := func(after int64, out chan<- []int64) {
		var got []int64
		err := h.Follow(ctx, "s", after, events.FollowOptions{}, func(ev events.Event) error {
			got = append(got, ev.Seq)
			if ev.Seq == 5 {
				return events.ErrStop
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		out <- got
	}
	fromNewest, fromFirst := make(chan []int64, 1), make(chan []int64, 1)
	go follow(3, fromNewest)
	go follow(1, fromFirst)
	// Let both subscribe first, so that the one from the newest event
	// skips reading the store; either way each must get exactly these.
	time.Sleep(20 * time.Millisecond)
	for i := 4; i <= 5; i++ {
		if _, err := h.PublishWait(ctx, "s", "x", i); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-fromNewest; fmt.Sprint(got) != "[4 5]" {
		t.Errorf("from the newest event: %v, want [4 5]", got)
	}
	if got := <-fromFirst; fmt.Sprint(got) != "[2 3 4 5]" {
		t.Errorf("from the first event: %v, want [2 3 4 5]", got)
	}
}
