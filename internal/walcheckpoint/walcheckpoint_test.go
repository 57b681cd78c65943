package walcheckpoint_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"jarvis/internal/walcheckpoint"
)

// With wal_autocheckpoint off, the writer's pages stay in the log until the
// loop copies them into the database file from its own connection, and
// only once a write has marked the database dirty.
func TestLoopCopiesTheLogBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	w, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA wal_autocheckpoint = 0`, `CREATE TABLE t (v TEXT)`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2000; i++ {
		if _, err := w.Exec(`INSERT INTO t VALUES (?)`, strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if n := size(); n > 1<<20 {
		t.Fatalf("the database file is already %d bytes: the writer checkpointed", n)
	}
	ck, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	done := make(chan struct{})
	stopped := make(chan struct{})
	var dirty atomic.Bool
	go func() {
		walcheckpoint.Loop(done, ck, 5*time.Millisecond, &dirty, func(err error) { t.Error(err) })
		close(stopped)
	}()
	time.Sleep(50 * time.Millisecond)
	if n := size(); n > 1<<20 {
		t.Fatalf("checkpointed (%d bytes) although nothing marked the database dirty", n)
	}
	dirty.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for size() < 3<<19 {
		if time.Now().After(deadline) {
			t.Fatalf("the log was not copied back: database file %d bytes", size())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	<-stopped
}
