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

// openLog opens a database in WAL mode with table t: w, its one writer,
// with wal_autocheckpoint off as Loop's callers set it, and ck, a
// connection of its own for the checkpoints.
func openLog(t *testing.T) (path string, w, ck *sql.DB) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "db.sqlite")
	w, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	w.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA wal_autocheckpoint = 0`, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ck, err = sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	ck.SetMaxOpenConns(1)
	return path, w, ck
}

// With wal_autocheckpoint off, the writer's pages stay in the log until the
// loop copies them into the database file from its own connection, and
// only once a write has marked the database dirty.
func TestLoopCopiesTheLogBack(t *testing.T) {
	path, w, ck := openLog(t)
	for i := 0; i < 2000; i++ {
		if _, err := w.Exec(`INSERT INTO t(v) VALUES (?)`, strings.Repeat("x", 1000)); err != nil {
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
	done := make(chan struct{})
	stopped := make(chan struct{})
	var dirty atomic.Bool
	go func() {
		walcheckpoint.Loop(done, ck, w, 5*time.Millisecond, &dirty, func(err error) { t.Error(err) })
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

// Under commits that never pause, a PASSIVE checkpoint alone never lets the
// writer start the log over; the loop restarts it, so the log stays a small
// part of what was written.
func TestLoopBoundsALogThatNeverRests(t *testing.T) {
	path, w, ck := openLog(t)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		walcheckpoint.Loop(done, ck, w, 10*time.Millisecond, nil, func(err error) { t.Error(err) })
		close(stopped)
	}()
	// Each commit rewrites one row: one or two pages a commit, 4 KB each
	// in the log, with no pause between commits.
	const commits = 20000
	row := strings.Repeat("x", 2000)
	for i := 0; i < commits; i++ {
		if _, err := w.Exec(`INSERT OR REPLACE INTO t VALUES (?, ?)`, i%50, row); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	<-stopped
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if written := int64(commits) * 4096; fi.Size() > written/3 {
		t.Fatalf("the log is %d bytes after %d bytes of commits: it was never started over", fi.Size(), written)
	}
}
