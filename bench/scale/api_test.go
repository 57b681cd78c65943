package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jarvis/service/store"
)

// The HTTP part of the bench runs on a small fill: the service it starts
// answers a chat turn from the scripted upstream its config names, and the
// transcript of the long conversation has its 200 messages. (A config file
// Jarvis did not write waits for approval, so the bench must say it manages
// the file; without that the 1,000,000-message run failed after its fill.)
func TestMeasureAPIOnASmallFill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts jarvis-service")
	}
	ctx := context.Background()
	tmp := t.TempDir()
	dataDir := filepath.Join(tmp, "data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	st, err := store.Open(ctx, filepath.Join(dataDir, "jarvis.db"), store.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fill(ctx, st, c, fillSpec{Sessions: 20, Turns: 5, TextBytes: 200, Deltas: 6, Start: start, Seed: 1})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	long, err := fill(ctx, st, c, fillSpec{Sessions: 1, Turns: 100, TextBytes: 200, Deltas: 6, Start: c.Now(), Seed: 2})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if err := settle(ctx, st, c); err != nil {
		st.Close()
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := measureAPI(tmp, dataDir, long.Sessions[0], f.Sessions[0], 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a.TranscriptLen != 200 {
		t.Errorf("the long conversation's transcript has %d messages, want 200", a.TranscriptLen)
	}
	if a.FirstTurn <= 0 || a.WarmTurn <= 0 || a.Listen <= 0 {
		t.Errorf("figures not measured: %+v", a)
	}
}
