// Package checkpoint keeps the state of workspace paths before the desktop
// changes them, so that every change through the gate can be taken back.
//
// A Store lives in a folder of the data dir: file contents in a
// content-addressed object store (objects/ab/<sha256>, written once,
// fsynced, shared by every checkpoint that has the same bytes) and a SQLite
// index of the changes (checkpoints.db, synchronous=FULL). A change is
// recorded in two steps around the tool that makes it:
//
//	p, err := st.Begin(ctx, checkpoint.Meta{SessionID: s, TurnID: t, CallID: c, Tool: name}, paths)
//	// run the change
//	st.Finish(ctx, p)
//
// Begin stores the previous state of each path (content and mode, a folder
// as its whole tree, a symlink as its target, or "did not exist") and
// commits the change as pending before anything changes. Finish records the
// state after. The changes themselves are atomic (a rename), so a kill at
// any point leaves the old file or the new one; a change still pending when
// the store is next opened is settled by looking: its paths are captured
// again and the change is marked "done" (something changed) or "unchanged".
//
// Undo (undo.go) puts the paths of a turn's changes back to their states
// before the turn, newest change first, and is itself recorded as a change,
// so an undo can be undone. Prune (prune.go) keeps the store under its size
// and age caps.
package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"jarvis/app/audit"
	"jarvis/internal/fsperm"
	"jarvis/internal/reclaim"
)

// Kinds of a path's state.
const (
	None    = "none" // did not exist
	File    = "file"
	Dir     = "dir"
	Symlink = "symlink"
)

// State is a path's state at one moment: what Restore puts back.
type State struct {
	Kind   string      `json:"kind"`
	Mode   fs.FileMode `json:"mode,omitempty"`   // permission bits
	Object string      `json:"object,omitempty"` // sha256 of a file's bytes
	Size   int64       `json:"size,omitempty"`
	Target string      `json:"target,omitempty"` // a symlink's
	// Children of a folder, sorted by name.
	Children []Child `json:"children,omitempty"`
}

// Child is one entry of a folder's state.
type Child struct {
	Name  string `json:"name"`
	State State  `json:"state"`
}

// Equal reports whether two states are the same content, modes and shape.
func (s State) Equal(o State) bool {
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

// Meta says whose change a checkpoint is.
type Meta struct {
	SessionID string
	TurnID    string
	CallID    string
	Tool      string
	// Replaces says the change replaces each file it changes by a new
	// one (written beside it and renamed over it, as tools.Prepared's
	// Replaces reports), so the file's old inode outlives the change
	// untouched: Begin then keeps that inode itself as the object (a hard
	// link, no copy) where it can. Finish copies any object still shared
	// with another name after the change.
	Replaces bool
}

// Options configures a Store. Zero values take the defaults.
type Options struct {
	Now func() time.Time
}

// Store is an open checkpoint store. It is safe for concurrent use.
type Store struct {
	dir  string
	ws   *os.Root
	wsAt string
	db   *sql.DB
	// lazy is the same database on a connection that does not fsync its
	// commits: Finish's, whose loss a crash cannot make harmful (a change
	// still pending is settled by looking), and which the next synced
	// commit makes durable anyway.
	lazy *sql.DB
	now  func() time.Time
	// noLink is set once linking proved impossible for the whole store
	// (the workspace is on another filesystem): linkObject then no longer
	// reads a file only to find it must be copied.
	noLink atomic.Bool
	// step, when set, is called at each step of Guard (crash tests stop
	// the process there).
	step func(name string)
}

// Open opens (creating) the store in dir for the workspace folder ws, and
// settles the changes a crash left pending.
func Open(dir, ws string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Join(dir, "objects", "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	}
	p := filepath.Join(dir, "checkpoints.db")
	db, err := sql.Open("sqlite3", audit.DSN(p, "_journal_mode=WAL&_busy_timeout=5000&_synchronous=FULL&_txlock=immediate&_auto_vacuum=incremental"))
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	lazy, err := sql.Open("sqlite3", audit.DSN(p, "_journal_mode=WAL&_busy_timeout=5000&_synchronous=OFF&_txlock=immediate"))
	if err != nil {
		db.Close()
		root.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s := &Store{dir: dir, ws: root, wsAt: real, db: db, lazy: lazy, now: opts.Now}
	if err := s.makeFanOut(); err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := db.Exec(schema); err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	// What Prune deletes leaves the file (a store made before is rewritten
	// once).
	if err := reclaim.Incremental(context.Background(), db); err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := s.settle(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

const schema = `
CREATE TABLE IF NOT EXISTS changes (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	time       TEXT    NOT NULL,
	session_id TEXT    NOT NULL DEFAULT '',
	turn_id    TEXT    NOT NULL DEFAULT '',
	call_id    TEXT    NOT NULL DEFAULT '',
	tool       TEXT    NOT NULL,
	workspace  TEXT    NOT NULL DEFAULT '', -- the folder its paths are relative to
	state      TEXT    NOT NULL, -- pending | done | unchanged
	undone_by  INTEGER NOT NULL DEFAULT 0 -- the undo change that took it back
);
CREATE INDEX IF NOT EXISTS changes_turn ON changes(turn_id);
CREATE TABLE IF NOT EXISTS entries (
	change_id INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	path      TEXT    NOT NULL, -- workspace-relative, slash-separated
	before    TEXT    NOT NULL, -- State as JSON
	after     TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (change_id, seq)
);`

// Close closes the store.
func (s *Store) Close() error { return errors.Join(s.lazy.Close(), s.db.Close(), s.ws.Close()) }

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

// Workspace is the folder the store's paths are relative to (absolute,
// symlinks resolved).
func (s *Store) Workspace() string { return s.wsAt }

// Pending is a change whose previous state is stored and that may now run.
type Pending struct {
	ID    int64
	paths []string
}

// Ref is how an audit row names a checkpoint.
func Ref(id int64) string { return fmt.Sprintf("checkpoint-%d", id) }

// Begin stores the current state of paths (workspace-relative) and commits
// the change as pending: when it returns, the previous state is on disk.
func (s *Store) Begin(ctx context.Context, m Meta, paths []string) (*Pending, error) {
	paths = s.topMissing(paths)
	befores := make([]string, len(paths))
	var syncs *[]func() error
	if m.Replaces {
		syncs = new([]func() error)
	}
	for i, p := range paths {
		st, err := s.capture(p, true, syncs)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %w", p, err)
		}
		b, _ := json.Marshal(st)
		befores[i] = string(b)
	}
	s.at("captured")
	// The fsyncs of linked objects overlap the commit: each is a journal
	// commit and a cache flush of its own. The change waits for both,
	// and a pending change whose objects did not become durable is
	// settled at once (nothing ran), so the order between them does not
	// matter.
	durable := make(chan error, 1)
	if syncs != nil && len(*syncs) > 0 {
		go func() {
			var err error
			for _, f := range *syncs {
				err = errors.Join(err, f())
			}
			durable <- err
		}()
	} else {
		durable <- nil
	}
	id, err := s.commitPending(ctx, m, paths, befores)
	if derr := <-durable; derr != nil {
		if err == nil {
			_ = s.settleOne(context.WithoutCancel(ctx), id)
		}
		return nil, fmt.Errorf("checkpoint: %w", errors.Join(err, derr))
	}
	if err != nil {
		return nil, err
	}
	return &Pending{ID: id, paths: paths}, nil
}

// commitPending records the change as pending with the states before, in
// a synced commit, and returns its id.
func (s *Store) commitPending(ctx context.Context, m Meta, paths, befores []string) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO changes (time, session_id, turn_id, call_id, tool, workspace, state) VALUES (?,?,?,?,?,?,'pending')`,
		s.now().UTC().Format(time.RFC3339Nano), m.SessionID, m.TurnID, m.CallID, m.Tool, s.wsAt)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	id, _ := res.LastInsertId()
	for i, p := range paths {
		if _, err := tx.ExecContext(ctx, `INSERT INTO entries (change_id, seq, path, before) VALUES (?,?,?,?)`, id, i, p, befores[i]); err != nil {
			return 0, fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return id, nil
}

// Guard runs change with a checkpoint of paths around it: Begin, change,
// Finish. It returns the change's result and the checkpoint's id; nothing
// runs when the previous state cannot be stored.
func (s *Store) Guard(ctx context.Context, m Meta, paths []string, change func() (string, error)) (string, int64, error) {
	p, err := s.Begin(ctx, m, paths)
	if err != nil {
		return "", 0, fmt.Errorf("nothing was changed: %w", err)
	}
	s.at("begun")
	out, err := change()
	s.at("changed")
	// The change has happened (or not); record it even if ctx has ended.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	// A change Finish cannot record stays pending and is settled by
	// looking at the next Open; the change's own outcome is what counts.
	_ = s.Finish(fctx, p)
	s.at("finished")
	return out, p.ID, err
}

func (s *Store) at(step string) {
	if s.step != nil {
		s.step(step)
	}
}

// topMissing replaces each path whose folder does not exist yet with its
// outermost missing ancestor: the tools create the folders of a new path,
// and taking the change back must remove them too.
func (s *Store) topMissing(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		for {
			parent := filepath.Dir(filepath.FromSlash(p))
			if parent == "." {
				break
			}
			if _, err := s.ws.Lstat(parent); err == nil {
				break
			}
			p = filepath.ToSlash(parent)
		}
		out = append(out, p)
	}
	return out
}

// Finish records the state of the change's paths after it ran (or failed).
func (s *Store) Finish(ctx context.Context, p *Pending) error {
	return s.settleOne(ctx, p.ID)
}

// settle finishes every change a crash left pending.
func (s *Store) settle(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM changes WHERE state = 'pending' AND workspace = ? ORDER BY id`, s.wsAt)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if err := s.settleOne(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// settleOne captures the paths of change id as they are now, stores that as
// their after state, and marks the change done, or unchanged when nothing
// differs from before.
func (s *Store) settleOne(ctx context.Context, id int64) error {
	ents, err := s.entries(ctx, id)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := s.unshare(e.Before); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", e.Path, err)
		}
	}
	changed := false
	afters := make([]string, len(ents))
	for i, e := range ents {
		// The state after is hashed, not stored: undo needs only to
		// recognise it; its bytes are the next change's "before", or the
		// file itself (ContentOf).
		st, err := s.capture(e.Path, false, nil)
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", e.Path, err)
		}
		changed = changed || !st.Equal(e.Before)
		b, _ := json.Marshal(st)
		afters[i] = string(b)
	}
	state := "unchanged"
	if changed {
		state = "done"
	}
	tx, err := s.lazy.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer tx.Rollback()
	for i, e := range ents {
		if _, err := tx.ExecContext(ctx, `UPDATE entries SET after = ? WHERE change_id = ? AND seq = ?`, afters[i], id, e.seq); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE changes SET state = ? WHERE id = ?`, state, id); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return tx.Commit()
}

// Entry is one path of a change.
type Entry struct {
	Path   string `json:"path"`
	Before State  `json:"before"`
	After  *State `json:"after,omitempty"` // nil while pending
	seq    int
}

func (s *Store) entries(ctx context.Context, id int64) ([]Entry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, path, before, after FROM entries WHERE change_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var before, after string
		if err := rows.Scan(&e.seq, &e.Path, &before, &after); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(before), &e.Before); err != nil {
			return nil, fmt.Errorf("checkpoint: change %d: %w", id, err)
		}
		if after != "" {
			e.After = new(State)
			if err := json.Unmarshal([]byte(after), e.After); err != nil {
				return nil, fmt.Errorf("checkpoint: change %d: %w", id, err)
			}
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// capture reads the state of rel (workspace-relative, slash-separated),
// never following a symlink at it. With store, file contents go into the
// object store (fsynced); without, only their hashes are computed. With
// link, a file at rel (not in a folder at rel) is kept by linking its inode
// where it can (linkObject), and the fsyncs that makes due are added to it.
func (s *Store) capture(rel string, store bool, link *[]func() error) (State, error) {
	rel = filepath.FromSlash(rel)
	fi, err := s.ws.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return State{Kind: None}, nil
	}
	if err != nil {
		return State{}, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := s.ws.Readlink(rel)
		return State{Kind: Symlink, Target: t}, err
	case fi.IsDir():
		st := State{Kind: Dir, Mode: fi.Mode().Perm()}
		f, err := s.ws.Open(rel)
		if err != nil {
			return State{}, err
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return State{}, err
		}
		sort.Strings(names)
		for _, n := range names {
			c, err := s.capture(filepath.ToSlash(filepath.Join(rel, n)), store, nil)
			if err != nil {
				return State{}, err
			}
			st.Children = append(st.Children, Child{Name: n, State: c})
		}
		return st, nil
	case fi.Mode().IsRegular():
		f, err := s.ws.Open(rel)
		if err != nil {
			return State{}, err
		}
		defer f.Close()
		if store && link != nil {
			st, ok, err := s.linkObject(f, link)
			if err != nil || ok {
				return st, err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return State{}, err
			}
		}
		sum, size, err := s.putObject(f, fi.Size(), store)
		if err != nil {
			return State{}, err
		}
		return State{Kind: File, Mode: fi.Mode().Perm(), Object: sum, Size: size}, nil
	}
	return State{}, fmt.Errorf("%s is neither a file, a folder nor a symlink", rel)
}

// linkObject keeps the file open as f as an object by giving its inode a
// name in the store (linkInode) instead of copying its bytes: the change
// that follows replaces the file by a new inode, so this one is no longer
// written to. It still reads the file once, for the hash that names it;
// the fsync of the inode (cheap when its data is already on disk) and of
// the object's folder is added to syncs, which Begin runs while it commits
// the change as pending, and waits for before the change may run. It
// reports false, and keeps nothing, where the inode cannot be
// kept alone: it has other names already (one of them could change it), it
// changed while being read, or the link fails (another filesystem, no
// permission, no /proc); the caller then copies.
func (s *Store) linkObject(f *os.File, syncs *[]func() error) (State, bool, error) {
	if s.noLink.Load() {
		return State{}, false, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || links(fi) != 1 {
		return State{}, false, err
	}
	h := sha256.New()
	buf := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(h, f, *buf)
	copyBufs.Put(buf)
	if err != nil {
		return State{}, false, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	st := State{Kind: File, Mode: fi.Mode().Perm(), Object: sum, Size: n}
	dst := s.objectPath(sum)
	if ok, err := s.stored(sum); ok || err != nil {
		return st, ok, err // deduplicated
	}
	if err := fanOut(filepath.Dir(dst)); err != nil {
		return State{}, false, err
	}
	if err := linkInode(f, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Stored meanwhile by another store.
			ok, err := s.stored(sum)
			return st, ok, err
		}
		if errors.Is(err, syscall.EXDEV) || errors.Is(err, errors.ErrUnsupported) {
			s.noLink.Store(true) // the workspace is elsewhere: not tried again
		}
		return State{}, false, nil
	}
	s.at("linked")
	// The bytes hashed must be the bytes kept: an inode written to while
	// it was read is not kept (the copy reads it again).
	if after, err := f.Stat(); err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) || n != fi.Size() {
		os.Remove(dst)
		return State{}, false, nil
	}
	// The inode's data and its new link count first, then the name.
	// Opened by name: an object replaced meanwhile (unshare) was fsynced
	// by whoever wrote it.
	*syncs = append(*syncs, func() error {
		o, err := os.Open(dst)
		if err != nil {
			return err
		}
		return errors.Join(o.Sync(), o.Close(), fsperm.SyncDir(filepath.Dir(dst)))
	})
	return st, true, nil
}

// stored reports whether object sum is in the store, the store's alone.
// One that still shares its inode with another name (kept by linkObject in
// a process that died before its change was recorded, so that no pending
// change unshares it) is copied first, or dropped when its bytes no longer
// match its name: a deduplicated checkpoint must never refer to bytes that
// something else can write.
func (s *Store) stored(sum string) (bool, error) {
	fi, err := os.Lstat(s.objectPath(sum))
	if err != nil {
		return false, nil
	}
	if links(fi) <= 1 {
		return true, nil
	}
	if err := s.unshare(State{Kind: File, Object: sum}); err != nil {
		return false, err
	}
	_, err = os.Lstat(s.objectPath(sum))
	return err == nil, nil
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// unshare makes sure the object of a file state is the store's alone: an
// object linkObject kept that still has another name once the change has
// run (the change did not replace the file after all, or a crash came
// first) is replaced by a copy of its bytes, so that nothing written
// through that other name can change it later.
func (s *Store) unshare(st State) error {
	if st.Kind != File || st.Object == "" {
		return nil
	}
	dst := s.objectPath(st.Object)
	fi, err := os.Lstat(dst)
	if err != nil || links(fi) <= 1 {
		return nil // gone (pruned) or the store's own
	}
	in, err := os.Open(dst)
	if err != nil {
		return err
	}
	defer in.Close()
	h := sha256.New()
	tmp, _, err := s.writeTemp(in, h)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // no-op once renamed
	if hex.EncodeToString(h.Sum(nil)) != st.Object {
		// Written to through its other name before the change replaced
		// it: the bytes it was named after are gone, and an object that
		// does not hold them must not be restored as if it did.
		return errors.Join(os.Remove(dst), fsperm.SyncDir(filepath.Dir(dst)))
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return fsperm.SyncDir(filepath.Dir(dst))
}

// objectPath is where the object with hash sum is stored.
func (s *Store) objectPath(sum string) string {
	return filepath.Join(s.dir, "objects", sum[:2], sum)
}

// inMemory is the largest object putObject hashes before writing, so that
// bytes already stored are not written again.
const inMemory = 16 << 20

// putObject hashes r and, with store, keeps its bytes in the object store
// unless an object with that hash is already there. A new object is written
// to a temporary file, fsynced, renamed into place, and its folder fsynced.
func (s *Store) putObject(r io.Reader, sizeHint int64, store bool) (string, int64, error) {
	h := sha256.New()
	if !store {
		n, err := io.Copy(h, r)
		return hex.EncodeToString(h.Sum(nil)), n, err
	}
	head, err := readHead(r, sizeHint, inMemory+1)
	if err != nil {
		return "", 0, err
	}
	if len(head) <= inMemory {
		h.Write(head)
		sum := hex.EncodeToString(h.Sum(nil))
		if ok, err := s.stored(sum); ok || err != nil {
			return sum, int64(len(head)), err // deduplicated
		}
		return sum, int64(len(head)), s.writeObject(bytes.NewReader(head), sum)
	}
	// Too large to hold: write while hashing, then name it.
	tmp, n, err := s.writeTemp(io.MultiReader(bytes.NewReader(head), r), h)
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp) // no-op once renamed
	sum := hex.EncodeToString(h.Sum(nil))
	return sum, n, s.place(tmp, sum)
}

// readHead reads r up to limit bytes in one allocation of the expected
// size plus one byte, which is where its end shows (bytes.Buffer would
// grow, and copy, a buffer that is exactly full before it sees the end); a
// file that grew meanwhile still reads whole, up to limit.
func readHead(r io.Reader, sizeHint int64, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(max(sizeHint, 0), int64(limit-1))+1)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow: the file grew
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// writeObject stores the bytes of r as object sum.
func (s *Store) writeObject(r io.Reader, sum string) error {
	tmp, _, err := s.writeTemp(r, io.Discard)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return s.place(tmp, sum)
}

// writeTemp copies r (and to also) into a new fsynced temporary file.
func (s *Store) writeTemp(r io.Reader, also io.Writer) (string, int64, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(s.dir, "objects", "tmp", hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(io.MultiWriter(f, also), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", 0, err
	}
	return tmp, n, nil
}

// place renames a written temporary file to object sum's path and fsyncs
// the folder, so the name is as durable as the bytes.
func (s *Store) place(tmp, sum string) error {
	dst := s.objectPath(sum)
	if ok, err := s.stored(sum); ok || err != nil {
		return err
	}
	if err := fanOut(filepath.Dir(dst)); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return fsperm.SyncDir(filepath.Dir(dst))
}

// makeFanOut creates the 256 object folders (objects/00 to ff) once, so
// that storing an object does not have to create a folder and fsync its
// name on the way.
func (s *Store) makeFanOut() error {
	objs := filepath.Join(s.dir, "objects")
	if _, err := os.Stat(filepath.Join(objs, "ff")); err == nil {
		return nil
	}
	for i := 0; i < 256; i++ {
		if err := os.Mkdir(filepath.Join(objs, fmt.Sprintf("%02x", i)), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fsperm.SyncDir(objs)
}

// fanOut makes sure the object folder dir exists, and that a new one's
// name is as durable as the object's name in it will be.
func fanOut(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return fsperm.SyncDir(filepath.Dir(dir))
}
