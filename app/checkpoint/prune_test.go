package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPruneKeepsTheCaps: old checkpoints go by age, then the oldest turns
// until the stored contents fit the size cap; newer turns stay undoable.
func TestPruneKeepsTheCaps(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e.st.now = func() time.Time { return now }
	// Ten turns, a day apart, each overwriting a 100 KiB file.
	for i := 0; i < 10; i++ {
		e.write(fmt.Sprintf("f%d", i), random(t, 100<<10), 0o644)
		e.call(fmt.Sprintf("t%d", i), "write_file", map[string]string{"path": fmt.Sprintf("f%d", i), "content": "x"})
		now = now.Add(24 * time.Hour)
	}
	u, _ := e.st.Usage(ctx)
	if u.Changes != 10 || u.Bytes < 10*100<<10 {
		t.Fatalf("usage before %+v", u)
	}
	// Age: 5.5 days keeps the last 5 turns (days 5..9 from day 10).
	rep, err := e.st.Prune(ctx, Retention{MaxBytes: 1 << 30, MaxAge: 132 * time.Hour})
	if err != nil || rep.Changes != 5 || rep.Usage.Changes != 5 {
		t.Fatalf("age prune %+v %v", rep, err)
	}
	// Size: 250 KiB keeps the newest two 100 KiB contents.
	rep, err = e.st.Prune(ctx, Retention{MaxBytes: 250 << 10, MaxAge: 365 * 24 * time.Hour})
	if err != nil || rep.Usage.Bytes > 250<<10 || rep.Usage.Changes != 2 {
		t.Fatalf("size prune %+v %v", rep, err)
	}
	if u, _ := e.st.Usage(ctx); u.Bytes > 250<<10 {
		t.Fatalf("usage after %+v exceeds the cap", u)
	}
	turns, _ := e.st.List(ctx, "")
	if len(turns) != 2 || turns[0].TurnID != "t8" || turns[1].TurnID != "t9" {
		t.Fatalf("kept turns %+v", turns)
	}
	if _, err := e.st.Undo(ctx, "t9", nil, false); err != nil {
		t.Fatalf("a kept turn is not undoable: %v", err)
	}
	if _, err := e.st.Undo(ctx, "t3", nil, false); err == nil || !strings.Contains(err.Error(), "changed no files") {
		t.Fatalf("a pruned turn: %v", err)
	}
}

func TestPruneTrash(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 6; i++ {
		when := now.Add(time.Duration(i-6) * 24 * time.Hour)
		slot := filepath.Join(dir, when.Format("20060102T150405Z")+"-ab")
		os.MkdirAll(slot, 0o700)
		os.WriteFile(filepath.Join(slot, "f"), make([]byte, 1000), 0o600)
		os.Chtimes(slot, when, when)
	}
	// Older than 3.5 days: 3 go; then 2000 bytes keeps the newest 2.
	n, err := PruneTrash(dir, Retention{MaxBytes: 1 << 30, MaxAge: 84 * time.Hour}, now)
	if err != nil || n != 3 {
		t.Fatalf("age: %d %v", n, err)
	}
	n, err = PruneTrash(dir, Retention{MaxBytes: 2000, MaxAge: 365 * 24 * time.Hour}, now)
	ents, _ := os.ReadDir(dir)
	if err != nil || n != 1 || len(ents) != 2 || !strings.HasPrefix(ents[0].Name(), "20261123") {
		t.Fatalf("size: %d %v %v", n, err, ents)
	}
}

// TestPruneGivesSpaceBack: what Prune deletes from the checkpoint database
// leaves the file, not only its rows (issue 44: deleting gives the space
// back).
func TestPruneGivesSpaceBack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e.st.now = func() time.Time { return now }
	// A year of checkpoints a turn changed many files in: rows written as
	// Guard writes them (a change and its entries), 400 turns of 20 files.
	tx, err := e.st.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		when := now.Add(time.Duration(i-400) * 24 * time.Hour).Format(time.RFC3339Nano)
		res, err := tx.ExecContext(ctx, `INSERT INTO changes(time, session_id, turn_id, tool, state) VALUES (?, 'g_1', ?, 'write_file', 'done')`, when, fmt.Sprintf("t%d", i))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		for j := range 20 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO entries(change_id, seq, path, before) VALUES (?, ?, ?, '{"kind":"absent"}')`,
				id, j, fmt.Sprintf("project/src/module%03d/file%03d_%s.go", i, j, strings.Repeat("x", 60))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.store, "checkpoints.db")
	e.reopen() // closing writes the log back into the file
	e.st.now = func() time.Time { return now }
	full := fileBytes(t, path)
	// A 30-day cap keeps the last 30 turns.
	rep, err := e.st.Prune(ctx, Retention{MaxAge: 30 * 24 * time.Hour})
	if err != nil || rep.Usage.Changes != 30 {
		t.Fatalf("prune %+v %v, want 30 changes kept", rep, err)
	}
	e.st.Close()
	after := fileBytes(t, path)
	t.Logf("checkpoints.db: %d bytes with 400 turns, %d after pruning to 30", full, after)
	if after*4 > full {
		t.Fatalf("checkpoints.db went from %d to %d bytes after pruning 370 of 400 turns", full, after)
	}
}

func fileBytes(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	n := fi.Size()
	if w, err := os.Stat(path + "-wal"); err == nil {
		n += w.Size()
	}
	return n
}
