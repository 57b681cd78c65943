package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"jarvis/service/store"
)

// At 100,000 messages of about 200 bytes (2,000 conversations of 25 turns,
// each reply streamed as deltas), the database takes at most 3 times its
// messages' text, once the replay window has passed. The turns stay (a
// conversation's versions are the chain of their parents);
// docs/benchmarks/scale.md has the figures and each table's share.
func TestDiskAt100kMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100,000 messages")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jarvis.db")
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	st, err := store.Open(ctx, path, store.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fill(ctx, st, c, fillSpec{Sessions: 2000, Turns: 25, TextBytes: 200, Deltas: 6, Start: start, Seed: 1})
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
	size, err := dbFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(size) / float64(f.TextBytes)
	t.Logf("%d messages, %d bytes of text, database %d bytes: %.2f times the text, %.0f bytes a message",
		f.Messages, f.TextBytes, size, ratio, float64(size)/float64(f.Messages))
	if f.Messages != 100000 {
		t.Fatalf("filled %d messages, want 100000", f.Messages)
	}
	_, shares, err := tableShares(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shares {
		t.Logf("%-20s %5.2f times the text", sh.Table, float64(sh.Bytes)/float64(f.TextBytes))
	}
	if ratio > 3.0 {
		t.Errorf("the database is %.2f times its text (%d bytes for %d), over 3", ratio, size, f.TextBytes)
	}
}
