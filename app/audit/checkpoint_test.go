package audit

import (
	"context"
	"path/filepath"
	"testing"
)

// TestCheckpointIsChained: a row's checkpoint reference is stored, read
// back, and covered by the chain, so pointing undo at another checkpoint
// breaks it.
func TestCheckpointIsChained(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path)
	seed(t, l, 1)
	e := entry("write_file", Allowed, ByUser)
	e.Checkpoint = "checkpoint-7"
	got, err := l.Append(context.Background(), e)
	if err != nil || got.Checkpoint != "checkpoint-7" {
		t.Fatalf("append: %+v %v", got, err)
	}
	seed(t, l, 1)
	rows, err := l.List(context.Background(), Filter{})
	if err != nil || len(rows) != 3 || rows[1].Checkpoint != "checkpoint-7" || rows[0].Checkpoint != "" {
		t.Fatalf("query: %+v %v", rows, err)
	}
	if rep, _ := l.Verify(context.Background()); !rep.OK {
		t.Fatalf("verify: %+v", rep)
	}
	db := raw(t, path)
	for _, q := range []string{`DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET checkpoint = 'checkpoint-1' WHERE id = 2`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if rep, _ := l.Verify(context.Background()); rep.OK || rep.FirstBadID != 2 {
		t.Fatalf("a changed checkpoint went unnoticed: %+v", rep)
	}
}
