// Package store owns the service's SQLite database: sessions, messages,
// session events, turns and tool calls. All SQL of the service lives here.
//
// Concurrency: a Store is safe for concurrent use. Writes go through one
// connection (SQLite allows one writer; serialising them in Go avoids
// "database is locked"), reads through a pool of read-only connections that
// WAL lets run beside the writer.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"jarvis/internal/reclaim"
	"jarvis/internal/walcheckpoint"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// readDriver is the readers' driver: SQLite with the store's own SQL
// functions (contains_fold, search.go).
const readDriver = "sqlite3_jarvis_store"

func init() {
	sql.Register(readDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		return c.RegisterFunc("contains_fold", containsFold, true)
	}})
}

//go:embed migrations/*.sql
var migrations embed.FS

// Sentinel errors; the HTTP layer maps them to status codes.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Store is the service database.
type Store struct {
	w   *sql.DB // exactly one connection: the writer
	r   *sql.DB // read-only pool
	ck  *sql.DB // one connection for WAL checkpoints, off the write path
	now func() time.Time
	// window is how long events are kept whole (compact.go).
	window time.Duration

	stop chan struct{} // closed by Close: ends the checkpoint loop
	wg   sync.WaitGroup

	// Statements of every turn, prepared once on the writer connection
	// (preparing costs as much as running them).
	insertEvent, insertMessage, insertTurn, countRunning, touchSnippet, touchOnly, endTurn, endTurnDone, selectLastSeqW *sql.Stmt
	// Reads of every turn and stream, prepared once on the reader pool
	// (database/sql prepares them on each connection as it is used).
	selectSession, selectMessages, selectEventsAfter, selectLastSeq *sql.Stmt
}

// Options configures Open.
type Options struct {
	Now    func() time.Time // clock for timestamps; default time.Now
	Logger *slog.Logger     // for checkpoint errors; default none
	// ReplayWindow is how long a session's events are kept whole for a
	// Last-Event-ID replay before they are compacted; default
	// DefaultReplayWindow.
	ReplayWindow time.Duration
}

// Open opens (creating if needed) the database at path and applies pending migrations.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", "10000")
	// NORMAL in WAL mode survives a process crash (SIGKILL); only an OS crash
	// or power loss can lose the last transactions.
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	// Freed pages go back to the file system on Reclaim (compact.go); set
	// before the journal mode, as a new database must have it.
	q.Set("_auto_vacuum", "incremental")
	// Keep the statements of ad-hoc queries prepared (mattn/go-sqlite3
	// prepares each one anew otherwise); the hot ones are prepared below.
	q.Set("_stmt_cache_size", "32")
	w, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.ReplayWindow <= 0 {
		opts.ReplayWindow = DefaultReplayWindow
	}
	s := &Store{w: w, now: opts.Now, window: opts.ReplayWindow, stop: make(chan struct{})}
	if err := s.incremental(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	// Checkpoints run on their own connection (see the loop below), not in
	// whichever commit crosses SQLite's 1,000-page mark.
	if _, err := w.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.insertEvent, `INSERT INTO events(session_id, seq, type, data, created_at) VALUES (?,?,?,?,?)`},
		{&s.insertMessage, insertMessageSQL},
		{&s.insertTurn, `INSERT INTO turns(id, session_id, status, started_at, parent_id) VALUES (?,?,?,?,?)`},
		{&s.countRunning, `SELECT COUNT(*) FROM turns WHERE session_id = ? AND status = 'running'`},
		{&s.touchSnippet, `UPDATE sessions SET updated_at = ?, last_snippet = ? WHERE id = ?`},
		{&s.touchOnly, `UPDATE sessions SET updated_at = ? WHERE id = ?`},
		{&s.endTurn, `UPDATE turns SET status = ?, error_code = ?, ended_at = ? WHERE id = ? AND status = ?`},
		{&s.endTurnDone, `UPDATE turns SET status = 'done', error_code = '', started_at = '', ended_at = NULL WHERE id = ? AND status = ?`},
		{&s.selectLastSeqW, lastSeqSQL},
	} {
		if *p.st, err = w.PrepareContext(ctx, p.sql); err != nil {
			w.Close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	rq := url.Values{}
	rq.Set("_foreign_keys", "on")
	rq.Set("_busy_timeout", "10000")
	rq.Set("_query_only", "1")
	rq.Set("_stmt_cache_size", "32")
	r, err := sql.Open(readDriver, "file:"+path+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	// Keep the readers open: a new SQLite connection costs far more than a query.
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	r.SetConnMaxIdleTime(0)
	s.r = r
	cq := url.Values{}
	cq.Set("_busy_timeout", "10000")
	if s.ck, err = sql.Open("sqlite3", "file:"+path+"?"+cq.Encode()); err != nil {
		s.Close()
		return nil, err
	}
	s.ck.SetMaxOpenConns(1)
	s.ck.SetConnMaxIdleTime(0)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		walcheckpoint.Loop(s.stop, s.ck, s.w, checkpointEvery, nil, func(err error) { log.Warn("database checkpoint", "err", err) })
	}()
	s.wg.Add(1)
	go s.every(indexEvery, "search index", s.indexMessages, log) // searchindex.go
	s.wg.Add(1)
	go s.every(compactEvery, "database maintenance", s.Maintain, log) // compact.go
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.selectSession, `SELECT ` + sessionCols + ` FROM sessions WHERE id = ?`},
		{&s.selectMessages, selectShownMessagesSQL},
		{&s.selectEventsAfter, `SELECT session_id, seq, type, data, created_at FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`},
		{&s.selectLastSeq, lastSeqSQL},
	} {
		if *p.st, err = r.PrepareContext(ctx, p.sql); err != nil {
			s.Close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	return s, nil
}

// lastSeqSQL is a session's highest seq: its newest stored event's, or,
// when compaction deleted every event, the replay horizon (compact.go).
const lastSeqSQL = `SELECT MAX(COALESCE((SELECT MAX(seq) FROM events WHERE session_id = ?1), 0),
    COALESCE((SELECT upto_seq FROM events_compacted WHERE session_id = ?1), 0))`

// checkpointEvery is how often the WAL is copied back into the database.
const checkpointEvery = time.Second

// Close closes the database.
func (s *Store) Close() error {
	close(s.stop)
	s.wg.Wait()
	for _, st := range []*sql.Stmt{s.insertEvent, s.insertMessage, s.insertTurn, s.countRunning, s.touchSnippet, s.touchOnly, s.endTurn, s.endTurnDone, s.selectLastSeqW,
		s.selectSession, s.selectMessages, s.selectEventsAfter, s.selectLastSeq} {
		if st != nil {
			st.Close()
		}
	}
	var ckErr error
	if s.ck != nil {
		ckErr = s.ck.Close()
	}
	return errors.Join(s.r.Close(), ckErr, s.w.Close())
}

// IntegrityCheck runs PRAGMA integrity_check and returns its verdict ("ok" when sound).
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	var res string
	err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res)
	return res, err
}

// incremental makes a database made before the store reclaimed space
// (auto_vacuum NONE) give freed pages back (Reclaim); a new database is made
// so (Open's _auto_vacuum).
func (s *Store) incremental(ctx context.Context) error { return reclaim.Incremental(ctx, s.w) }

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad name", base)
		}
		var n int
		if err := s.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, v).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, v, s.ts()); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) ts() string { return Timestamp(s.now()) }

// timeLayout is RFC 3339 in UTC with a fixed number of fraction digits, so
// that timestamps sort as text in the order of time (ORDER BY updated_at).
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Timestamp formats t the way the store does.
func Timestamp(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
