// Package audit owns the desktop's tool-call audit log: an append-only
// SQLite table in which every row is hash-chained to the one before it.
//
// Each row records one tool call: the request (tool, arguments, the risk the
// service proposed), the gate's classification, the decision and who made it
// (policy, user, session grant, timeout, error), the execution's result or
// error (capped) and its duration. Its hash is
//
//	hex(HMAC-SHA256(key, prev_hash || canonical JSON of the row without its hash))
//
// with prev_hash of the first row being 64 zeros (Genesis). The key is kept
// outside the audit file (the OS keyring, or a 0600 file in another folder:
// anchor.go), so whoever can write the file but not read the key cannot
// forge a row or recompute the chain after changing one. The head (the
// newest row's id and hash) is anchored apart from the log, under the same
// key, so that cutting rows off the end, deleting the file or replacing it
// with another chain is detected too. Rows written before the chain was
// keyed (plain SHA-256, "legacy") are verified as they were written; the
// first keyed row covers the last legacy hash, so they cannot be changed
// without breaking it.
//
// Triggers refuse UPDATE and DELETE, and the package has no API for either;
// Verify recomputes the chain and compares it with the anchor, reporting the
// first row that was changed, removed or reordered even if the triggers
// were dropped and the file edited directly. What it cannot detect: changes
// by someone who holds the key (the user's own account can read the keyring
// and the key file), and the log and its anchor deleted together.
//
// Durability: a row is durable when Append returns, its anchor first. The
// anchor holds the row too and is made durable with one fdatasync; the
// SQLite commit that follows does not wait for its own fsync (WAL,
// synchronous=NORMAL), the write-ahead file is synced in the background
// and before the next anchor, and Open completes from the anchor a row a
// crash kept out of the log (anchor.go).
//
// Concurrency: a Log is safe for concurrent use. Appends are serialised by
// a mutex and one writer connection whose transactions start IMMEDIATE, so a
// second process appending to the same file (a CLI) waits rather than forks
// the chain. Reads (List, ExportJSONL, Verify) use a separate read-only pool
// and never block appends (WAL).
package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	_ "github.com/mattn/go-sqlite3"
)

// Decision values.
const (
	Allowed = "allowed"
	Denied  = "denied"
	// Withdrawn: the service gave up on the call (its timeout, a cancel, the
	// turn's end) before it ran; nothing ran, whatever the prompt's answer.
	Withdrawn = "withdrawn"
	// Held: the user's own action stopped before changing anything to ask
	// them first (an undo whose files changed since the turn): neither
	// allowed nor denied; what they choose next is a row of its own.
	Held = "held"
)

// DecidedBy values.
const (
	ByPolicy  = "policy"  // the tool's default or a policy rule, no prompt
	ByUser    = "user"    // the user answered a prompt
	BySession = "session" // an earlier "allow for this session"
	ByTimeout = "timeout" // the prompt was not answered in time
	ByError   = "error"   // anything went wrong: fail closed
	// ByService: the service decided: it withdrew the call, or it ran a
	// tool of its own that stays in the process (reported for the record).
	ByService = "service"
	// ByHeadless: the call would have prompted, and `jarvis --headless`
	// has nobody to ask: denied.
	ByHeadless = "headless"
	// ByAgent: nobody here decided: an agent's own program (a coding-agent
	// CLI) ran the tool inside itself and reported it afterwards.
	ByAgent = "agent"
	// ByExpired: a call of a scheduled task's run waited for approval in
	// the Inbox until the task's deadline: denied.
	ByExpired = "expired"
)

// Genesis is the prev_hash of the first row.
var Genesis = strings.Repeat("0", 64)

// ErrInvalid reports an entry Append refuses.
var ErrInvalid = errors.New("audit: invalid entry")

// Entry is one audit row. Append fills ID, Time (when zero), PrevHash and
// Hash.
type Entry struct {
	ID              int64           `json:"id"`
	Time            time.Time       `json:"time"`
	SessionID       string          `json:"session_id,omitempty"`
	ToolCallID      string          `json:"tool_call_id,omitempty"`
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty"`
	ProposedRisk    string          `json:"proposed_risk,omitempty"`
	Class           string          `json:"class"`
	Decision        string          `json:"decision"`
	DecidedBy       string          `json:"decided_by"`
	Reason          string          `json:"reason,omitempty"`
	Result          string          `json:"result,omitempty"`
	Error           string          `json:"error,omitempty"`
	DurationMS      int64           `json:"duration_ms"`
	// Checkpoint names the stored state of the files the call changed,
	// from before it ran (package app/checkpoint): what undo restores.
	Checkpoint string `json:"checkpoint,omitempty"`
	PrevHash   string `json:"prev_hash"`
	Hash       string `json:"hash"`
}

// Options configures a Log. Zero values take the defaults.
type Options struct {
	// Now is the clock for entries without a time. Default time.Now.
	Now func() time.Time
	// MaxTextBytes caps the stored result and error. Default 16 KiB.
	MaxTextBytes int
	// KeyDir holds the head anchor, and the chain key when Keyring is nil
	// or unavailable: a folder apart from the log's. Default
	// <user config dir>/jarvis/audit.
	KeyDir string
	// Keyring keeps the chain key (the OS keyring); nil: the key file.
	Keyring KeyStore
}

// Log is an open audit log.
type Log struct {
	w    *sql.DB // one connection: the only writer
	r    *sql.DB // read-only pool
	opts Options
	mu   sync.Mutex // serialises Append's read-last-then-insert

	key           []byte
	anchorFile    string
	legacyThrough int64 // rows up to this id are chained with plain SHA-256
	headErr       error // the log does not match its anchor: Append refuses

	wal       string        // the write-ahead file, synced after each commit
	walSynced int64         // rows up to this id are durable in the log (under mu)
	syncing   chan struct{} // closed when the background sync of the last row ends (under mu)
}

//go:embed migrations/*.sql
var migrations embed.FS

// DSN builds a SQLite URI for mattn/go-sqlite3; '?', '#' and '%' in the path must be escaped.
func DSN(path, params string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + p + "?" + params
}

// Open opens (creating if needed) the audit log at path and migrates it.
func Open(path string, opts Options) (*Log, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = 16 << 10
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("audit: need a file path, got %q", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	w, err := sql.Open("sqlite3", DSN(path, "_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	w.SetMaxOpenConns(1)
	if err := migrate(w); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite3", DSN(path, "mode=ro&_busy_timeout=5000&_query_only=on"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := r.Ping(); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{w: w, r: r, opts: opts, wal: path + "-wal"}
	if err := l.openChain(path); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// openChain loads the key and checks the log's head against its anchor:
// a mismatch makes Append refuse (ErrTampered), the log stays as it is.
func (l *Log) openChain(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	dir := l.opts.KeyDir
	if dir == "" {
		if dir, err = DefaultKeyDir(); err != nil {
			return err
		}
	}
	l.anchorFile = anchorPath(dir, abs)
	if err := l.w.QueryRow(`SELECT legacy_through FROM audit_chain WHERE id = 1`).Scan(&l.legacyThrough); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	last, lastHash, err := l.head(context.Background())
	if err != nil {
		return err
	}
	_, statErr := os.Stat(l.anchorFile)
	fresh := last <= l.legacyThrough && errors.Is(statErr, fs.ErrNotExist)
	if l.key, _, err = loadKey(dir, l.opts.Keyring, fresh); err != nil {
		return err
	}
	a, ok, err := readAnchor(l.anchorFile, l.key)
	if ok && last == a.LastID-1 && last >= l.legacyThrough && a.LegacyThrough == l.legacyThrough {
		if last, err = l.rollForward(a, last, lastHash); err != nil {
			return err
		}
	}
	if err := l.syncWAL(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.walSynced = last
	switch {
	case err != nil:
		l.headErr = err
	case !ok && fresh:
		// A new log, or one from before the chain was keyed: anchor it now.
		return writeAnchor(l.anchorFile, l.key, anchor{LastID: last, LastHash: lastHash, LegacyThrough: l.legacyThrough})
	case !ok:
		l.headErr = fmt.Errorf("its head anchor %s is missing", l.anchorFile)
	default:
		l.headErr = l.matchAnchor(context.Background(), l.r, a, last)
	}
	return nil
}

// rollForward completes an append a crash cut short: the anchor's own
// row, when it chains to the log's last one (last, lastHash) under the
// key, is committed as Append would have. It returns the log's last id.
func (l *Log) rollForward(a anchor, last int64, lastHash string) (int64, error) {
	r, ok := a.redo(l.key, lastHash)
	if !ok {
		return last, nil // not its row: matchAnchor reports the difference
	}
	ctx := context.Background()
	tx, err := l.w.BeginTx(ctx, nil)
	if err != nil {
		return last, fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	var now int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM audit_log`).Scan(&now); err != nil {
		return last, fmt.Errorf("audit: %w", err)
	}
	if now != last { // another process appended meanwhile
		return now, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_log (`+columns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, r.values()...); err != nil {
		return last, fmt.Errorf("audit: completing row %d from the head anchor: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return last, fmt.Errorf("audit: completing row %d from the head anchor: %w", r.ID, err)
	}
	return r.ID, nil
}

// syncWAL makes every commit so far durable: an fdatasync of the
// write-ahead file (SQLite, at synchronous=NORMAL, does it only at
// checkpoints). No such file: no commit waits in it.
func (l *Log) syncWAL() error {
	f, err := os.OpenFile(l.wal, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return errors.Join(datasync(f), f.Close())
}

// Check returns nil when rows can be appended, or an error wrapping
// ErrTampered when the log did not match its head anchor when it was
// opened: callers run nothing they could not record.
func (l *Log) Check() error {
	if l.headErr != nil {
		return fmt.Errorf("%w: %v; run jarvis-audit verify, and keep the log as evidence (move it and %s aside to start a new one)", ErrTampered, l.headErr, l.anchorFile)
	}
	return nil
}

// head returns the newest row's id and hash (0 and Genesis when empty).
func (l *Log) head(ctx context.Context) (int64, string, error) {
	var last int64
	h := Genesis
	err := l.w.QueryRowContext(ctx, `SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1`).Scan(&last, &h)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, "", fmt.Errorf("audit: %w", err)
	}
	return last, h, nil
}

// matchAnchor compares the log with its anchor; nil when they agree.
func (l *Log) matchAnchor(ctx context.Context, q querier, a anchor, last int64) error {
	if a.LegacyThrough != l.legacyThrough {
		return fmt.Errorf("the log says rows up to %d predate the keyed chain, its head anchor says %d", l.legacyThrough, a.LegacyThrough)
	}
	if last < a.LastID {
		return fmt.Errorf("rows %d to %d were removed from the end (the head anchor records row %d)", last+1, a.LastID, a.LastID)
	}
	if a.LastID == 0 {
		return nil
	}
	var h string
	if err := q.QueryRowContext(ctx, `SELECT hash FROM audit_log WHERE id = ?`, a.LastID).Scan(&h); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("audit: %w", err)
	}
	if h != a.LastHash {
		return fmt.Errorf("row %d is not the row the head anchor records: the log was replaced or rewritten", a.LastID)
	}
	return nil
}

// Close waits for the last row's background sync and closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.syncing != nil {
		<-l.syncing
	}
	l.mu.Unlock()
	return errors.Join(l.r.Close(), l.w.Close())
}

// migrate applies the embedded migrations NNN_name.sql above the database's
// user_version, each in its own transaction.
func migrate(db *sql.DB) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	var have int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&have); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("audit: migration %s: bad number", base)
		}
		if n <= have {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := db.Begin()
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if _, err := tx.Exec(string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("audit: migration %s: %w", base, err)
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, n)); err != nil {
			tx.Rollback()
			return fmt.Errorf("audit: migration %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("audit: migration %s: %w", base, err)
		}
	}
	return nil
}

// timeFormat is fixed width so stored times sort and compare as text.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

// row is an entry exactly as stored; the hash covers these strings.
type row struct {
	ID              int64  `json:"id"`
	Time            string `json:"time"`
	SessionID       string `json:"session_id"`
	ToolCallID      string `json:"tool_call_id"`
	Tool            string `json:"tool"`
	Arguments       string `json:"arguments"`
	EditedArguments string `json:"edited_arguments"`
	ProposedRisk    string `json:"proposed_risk"`
	Class           string `json:"class"`
	Decision        string `json:"decision"`
	DecidedBy       string `json:"decided_by"`
	Reason          string `json:"reason"`
	Result          string `json:"result"`
	Error           string `json:"error"`
	DurationMS      int64  `json:"duration_ms"`
	// Omitted when empty, so rows without one hash as they always did.
	Checkpoint string `json:"checkpoint,omitempty"`
	PrevHash   string `json:"-"`
	Hash       string `json:"-"`
}

// hash chains r to prev under key: HMAC-SHA256, or plain SHA-256 for a
// legacy row (nil key). encoding/json writes struct fields in declaration
// order, so the encoding is canonical.
func (r *row) hash(key []byte, prev string) string {
	b, err := json.Marshal(r)
	if err != nil { // only strings and ints: cannot happen
		panic(err)
	}
	h := sha256.New()
	if key != nil {
		h = hmac.New(sha256.New, key)
	}
	io.WriteString(h, prev)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// keyFor is the key row id was chained with: nil for a legacy row.
func (l *Log) keyFor(id int64) []byte {
	if id <= l.legacyThrough {
		return nil
	}
	return l.key
}

const columns = `id, time, session_id, tool_call_id, tool, arguments, edited_arguments, proposed_risk,
	class, decision, decided_by, reason, result, error, duration_ms, checkpoint, prev_hash, hash`

// values are r's columns, in the order of columns.
func (r *row) values() []any {
	return []any{r.ID, r.Time, r.SessionID, r.ToolCallID, r.Tool, r.Arguments, r.EditedArguments, r.ProposedRisk,
		r.Class, r.Decision, r.DecidedBy, r.Reason, r.Result, r.Error, r.DurationMS, r.Checkpoint, r.PrevHash, r.Hash}
}

func (r *row) scan(s interface{ Scan(...any) error }) error {
	return s.Scan(&r.ID, &r.Time, &r.SessionID, &r.ToolCallID, &r.Tool, &r.Arguments, &r.EditedArguments,
		&r.ProposedRisk, &r.Class, &r.Decision, &r.DecidedBy, &r.Reason, &r.Result, &r.Error,
		&r.DurationMS, &r.Checkpoint, &r.PrevHash, &r.Hash)
}

func (r *row) entry() Entry {
	t, _ := time.Parse(timeFormat, r.Time)
	e := Entry{
		ID: r.ID, Time: t, SessionID: r.SessionID, ToolCallID: r.ToolCallID, Tool: r.Tool,
		Arguments: json.RawMessage(r.Arguments), ProposedRisk: r.ProposedRisk, Class: r.Class,
		Decision: r.Decision, DecidedBy: r.DecidedBy, Reason: r.Reason, Result: r.Result, Error: r.Error,
		DurationMS: r.DurationMS, Checkpoint: r.Checkpoint, PrevHash: r.PrevHash, Hash: r.Hash,
	}
	if r.EditedArguments != "" {
		e.EditedArguments = json.RawMessage(r.EditedArguments)
	}
	return e
}

// canonicalJSON compacts valid JSON and stores anything else as a JSON
// string, so a malformed request is still recorded, verbatim.
func canonicalJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err == nil {
		return buf.String()
	}
	s, _ := json.Marshal(string(raw))
	return string(s)
}

// capText keeps the first max bytes of s on a rune boundary.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[truncated %d bytes]", len(s)-cut)
}

// Append validates e, chains it to the last row and stores it, returning
// the stored entry.
func (l *Log) Append(ctx context.Context, e Entry) (Entry, error) {
	if e.Tool == "" || e.Class == "" {
		return Entry{}, fmt.Errorf("%w: tool and class are required", ErrInvalid)
	}
	switch e.Decision {
	case Allowed, Denied, Withdrawn, Held:
	default:
		return Entry{}, fmt.Errorf("%w: decision %q", ErrInvalid, e.Decision)
	}
	switch e.DecidedBy {
	case ByPolicy, ByUser, BySession, ByTimeout, ByError, ByService, ByHeadless, ByAgent, ByExpired:
	default:
		return Entry{}, fmt.Errorf("%w: decided_by %q", ErrInvalid, e.DecidedBy)
	}
	if e.Time.IsZero() {
		e.Time = l.opts.Now()
	}
	r := row{
		Time: e.Time.UTC().Format(timeFormat), SessionID: e.SessionID, ToolCallID: e.ToolCallID, Tool: e.Tool,
		Arguments: canonicalJSON(e.Arguments), ProposedRisk: e.ProposedRisk, Class: e.Class,
		Decision: e.Decision, DecidedBy: e.DecidedBy, Reason: capText(e.Reason, l.opts.MaxTextBytes),
		Result: capText(e.Result, l.opts.MaxTextBytes), Error: capText(e.Error, l.opts.MaxTextBytes),
		DurationMS: e.DurationMS, Checkpoint: e.Checkpoint,
	}
	if len(e.EditedArguments) > 0 {
		r.EditedArguments = canonicalJSON(e.EditedArguments)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.Check(); err != nil {
		return Entry{}, err
	}
	tx, err := l.w.BeginTx(ctx, nil)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	var last int64
	prev := Genesis
	err = tx.QueryRowContext(ctx, `SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1`).Scan(&last, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("audit: %w", err)
	}
	r.ID = last + 1
	r.PrevHash = prev
	r.Hash = r.hash(l.keyFor(r.ID), prev)
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_log (`+columns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, r.values()...)
	if err != nil {
		return Entry{}, fmt.Errorf("audit: %w", err)
	}
	// The anchor about to replace the last one holds only this row: the
	// last one must be durable in the log first. It is when the background
	// sync of our own last append has ended; a row another process (or
	// Log) appended is synced here.
	if l.syncing != nil {
		<-l.syncing
		l.syncing = nil
	}
	if last > l.walSynced {
		if err := l.syncWAL(); err != nil {
			return Entry{}, fmt.Errorf("audit: %w", err)
		}
		l.walSynced = last
	}
	// The anchor moves while the transaction holds the write lock (other
	// writers wait), before the commit: a row is never committed without
	// its anchor, which holds the row itself until the log's copy is
	// durable. A failed commit puts the previous head back.
	if err := writeAnchor(l.anchorFile, l.key, anchor{LastID: r.ID, LastHash: r.Hash, LegacyThrough: l.legacyThrough, PrevHash: prev, Row: &r}); err != nil {
		return Entry{}, fmt.Errorf("audit: head anchor: %w", err)
	}
	if err := tx.Commit(); err != nil {
		writeAnchor(l.anchorFile, l.key, anchor{LastID: last, LastHash: prev, LegacyThrough: l.legacyThrough})
		return Entry{}, fmt.Errorf("audit: %w", err)
	}
	done := make(chan struct{})
	l.syncing = done
	go func(id int64) {
		defer close(done)
		if l.syncWAL() == nil {
			l.walSynced = id // read by whoever waits on done, under mu
		}
	}(r.ID)
	return r.entry(), nil
}

// Filter selects entries. Zero fields match everything.
type Filter struct {
	Tool       string
	Decision   string
	DecidedBy  string
	SessionID  string
	ToolCallID string
	Since      time.Time // inclusive
	Until      time.Time // exclusive
	AfterID    int64     // for paging: only ids above this
	// Limit caps List (default 1000, at most 10000) and ExportJSONL (zero:
	// no cap).
	Limit int
	// Newest returns the newest entries first.
	Newest bool
}

func (f Filter) query() (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Tool != "" {
		add("tool = ?", f.Tool)
	}
	if f.Decision != "" {
		add("decision = ?", f.Decision)
	}
	if f.DecidedBy != "" {
		add("decided_by = ?", f.DecidedBy)
	}
	if f.SessionID != "" {
		add("session_id = ?", f.SessionID)
	}
	if f.ToolCallID != "" {
		add("tool_call_id = ?", f.ToolCallID)
	}
	if !f.Since.IsZero() {
		add("time >= ?", f.Since.UTC().Format(timeFormat))
	}
	if !f.Until.IsZero() {
		add("time < ?", f.Until.UTC().Format(timeFormat))
	}
	if f.AfterID > 0 {
		add("id > ?", f.AfterID)
	}
	q := `SELECT ` + columns + ` FROM audit_log`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Newest {
		q += " ORDER BY id DESC"
	} else {
		q += " ORDER BY id"
	}
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return q, args
}

// querier is the read pool, or one read transaction (one snapshot of the
// log: Verify).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (l *Log) each(ctx context.Context, db querier, f Filter, fn func(*row) error) error {
	q, args := f.query()
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r row
		if err := r.scan(rows); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// List returns the entries f selects.
func (l *Log) List(ctx context.Context, f Filter) ([]Entry, error) {
	switch {
	case f.Limit <= 0:
		f.Limit = 1000
	case f.Limit > 10000:
		f.Limit = 10000
	}
	out := []Entry{}
	err := l.each(ctx, l.r, f, func(r *row) error { out = append(out, r.entry()); return nil })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ExportJSONL writes the entries f selects to w, one JSON object a line.
func (l *Log) ExportJSONL(ctx context.Context, w io.Writer, f Filter) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return l.each(ctx, l.r, f, func(r *row) error { return enc.Encode(r.entry()) })
}

// VerifyReport is Verify's finding.
type VerifyReport struct {
	OK   bool `json:"ok"`
	Rows int  `json:"rows"` // rows checked
	// FirstBadID is the first row that fails (for a truncated log: the
	// first missing id); zero when OK.
	FirstBadID int64  `json:"first_bad_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Warnings are problems that do not break the chain, such as a missing
	// append-only trigger.
	Warnings []string `json:"warnings,omitempty"`
}

// Verify recomputes the hash chain from the first row, compares its head
// with the anchor and reports the first row that was changed, removed or
// reordered, or the rows cut off the end. A broken chain is a report, not
// an error; errors are for a log that cannot be read. A failure found
// while rows were being appended (the anchor can then be ahead of the
// snapshot checked) is checked again on a new snapshot.
func (l *Log) Verify(ctx context.Context) (VerifyReport, error) {
	for try := 0; ; try++ {
		rep, head, err := l.verify(ctx)
		if err != nil || rep.OK || try == 4 {
			return rep, err
		}
		var now int64
		if err := l.r.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM audit_log`).Scan(&now); err != nil || now == head {
			return rep, nil // the log stood still: the finding stands
		}
	}
}

// verify is one Verify on one snapshot of the log, whose last id it returns.
func (l *Log) verify(ctx context.Context) (VerifyReport, int64, error) {
	rep := VerifyReport{OK: true}
	prev, last := Genesis, int64(0)
	fail := func(id int64, reason string) error {
		rep.OK, rep.FirstBadID, rep.Reason = false, id, reason
		return errStop
	}
	// One snapshot of the log, taken before the anchor is read: an append
	// moves the anchor before its commit, so the anchor is at most one row
	// ahead of the snapshot (that row in the anchor only, below).
	tx, err := l.r.BeginTx(ctx, nil)
	if err != nil {
		return VerifyReport{}, 0, fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	var head int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM audit_log`).Scan(&head); err != nil {
		return VerifyReport{}, 0, fmt.Errorf("audit: %w", err)
	}
	a, anchored, anchorErr := readAnchor(l.anchorFile, l.key)
	legacy := l.legacyThrough
	if anchored {
		legacy = a.LegacyThrough // the anchor's word, not the file's
	}
	err = l.each(ctx, tx, Filter{}, func(r *row) error {
		rep.Rows++
		key := l.key
		if r.ID <= legacy {
			key = nil
		}
		switch {
		case r.ID != last+1:
			return fail(last+1, fmt.Sprintf("row %d is missing (next row is %d)", last+1, r.ID))
		case r.PrevHash != prev:
			return fail(r.ID, "prev_hash does not match the previous row's hash")
		case !hmac.Equal([]byte(r.hash(key, r.PrevHash)), []byte(r.Hash)):
			return fail(r.ID, "row content does not match its hash: the row was changed (or written without the chain key)")
		}
		prev, last = r.Hash, r.ID
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return VerifyReport{}, 0, err
	}
	if rep.OK {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'`).Scan(&seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return VerifyReport{}, 0, fmt.Errorf("audit: %w", err)
		}
		if seq > last {
			rep.OK, rep.FirstBadID = false, last+1
			rep.Reason = fmt.Sprintf("rows %d to %d were removed from the end", last+1, seq)
		}
	}
	if rep.OK {
		switch {
		case anchorErr != nil:
			rep.OK, rep.Reason = false, anchorErr.Error()
		case !anchored && last > legacy:
			rep.OK, rep.Reason = false, fmt.Sprintf("the head anchor %s is missing: rows cut off the end could not be detected", l.anchorFile)
		case anchored && last == a.LastID-1 && a.LegacyThrough == l.legacyThrough && a.hasRedo(l.key, prev):
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("row %d is in the head anchor only: an append in progress, or one a crash cut short (opening the log completes it)", a.LastID))
		case anchored:
			if err := l.matchAnchor(ctx, tx, a, last); err != nil {
				rep.OK, rep.Reason = false, err.Error()
				if last < a.LastID {
					rep.FirstBadID = last + 1
				} else {
					rep.FirstBadID = a.LastID
				}
			} else if last > a.LastID {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("rows %d to %d were appended after the anchored head (by a program that does not anchor it)", a.LastID+1, last))
			}
		}
	}
	if legacy > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("rows 1 to %d predate the keyed chain: they are chained with plain SHA-256, held in place by the first keyed row", legacy))
	}
	for _, trig := range []string{"audit_log_no_update", "audit_log_no_delete"} {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?`, trig).Scan(&n); err != nil {
			return VerifyReport{}, 0, fmt.Errorf("audit: %w", err)
		}
		if n == 0 {
			rep.Warnings = append(rep.Warnings, "trigger "+trig+" is missing: the table is no longer append-only")
		}
	}
	return rep, head, nil
}

var errStop = errors.New("stop")
