package service_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/store"
)

// Past the replay window a session's events are deleted: a client that
// comes back with a Last-Event-ID from before is told to reload the
// transcript (stream.reset, expired_last_event_id), never given a stream
// with a hole; one from after the horizon is replayed as before, and the
// session goes on with the next seq.
func TestLastEventIDPastTheReplayWindowIsSaidExplicitly(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j1")
	for _, msg := range []string{"first", "second"} {
		if _, err := e.c.Chat(context.Background(), sid, msg); err != nil {
			t.Fatal(err)
		}
	}
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	latest := tr.LastEventID
	e.stop()
	// Two hours later, the store's compaction runs (as its background loop would).
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	st, err := store.Open(context.Background(), filepath.Join(e.dir, "jarvis.db"), store.Options{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	horizon, err := st.ReplayHorizon(context.Background(), sid)
	st.Close()
	if err != nil || horizon != latest {
		t.Fatalf("horizon %d %v, want %d (every event gone; the seqs go on from it)", horizon, err, latest)
	}
	e.start()
	var first api.StreamEvent
	e.c.Stream(context.Background(), sid, "1", func(ev api.StreamEvent) error { first = ev; return api.ErrStopStream })
	if first.Type != api.EventReset {
		t.Fatalf("Last-Event-ID 1 past the window: first event %s %s", first.Type, first.Data)
	}
	if r := decode[api.ResetEvent](t, first.Data); r.Reason != "expired_last_event_id" || r.LatestID != latest {
		t.Fatalf("reset %+v", r)
	}
	// From the horizon on nothing is missing: the next turn's events come, in order.
	got := make(chan api.StreamEvent, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.c.Stream(ctx, sid, strconv.FormatInt(latest, 10), func(ev api.StreamEvent) error {
		got <- ev
		if ev.Type == api.EventFinal {
			return api.ErrStopStream
		}
		return nil
	})
	if _, err := e.c.Chat(context.Background(), sid, "third"); err != nil {
		t.Fatal(err)
	}
	ev := <-got
	if ev.Type != api.EventUserMessage || ev.ID != strconv.FormatInt(latest+1, 10) {
		t.Fatalf("after the horizon: %+v, want user.message with id %d", ev, latest+1)
	}
}
