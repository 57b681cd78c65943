package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Errors of Undo; test with errors.Is.
var (
	ErrNoChanges     = errors.New("the turn changed no files")
	ErrConflict      = errors.New("files were changed since the turn")
	ErrAlreadyUndone = errors.New("the turn was already undone")
)

// FileChange is one path a turn changed: its state before the turn's first
// change to it and after the turn's last.
type FileChange struct {
	Path   string `json:"path"`
	Before State  `json:"before"`
	After  State  `json:"after"`
	last   int    // order of the last change to it, for undoing newest first
}

// Turn is a turn that changed files.
type Turn struct {
	TurnID    string       `json:"turn_id"`
	SessionID string       `json:"session_id,omitempty"`
	Time      time.Time    `json:"time"` // of its first change
	Tools     []string     `json:"tools"`
	Files     []FileChange `json:"files"`
	Undone    bool         `json:"undone,omitempty"`
	changes   []int64
}

// List returns the turns that changed files in the store's workspace,
// oldest first; with sessionID, only that session's.
func (s *Store) List(ctx context.Context, sessionID string) ([]Turn, error) {
	// Only this workspace's: the paths are relative to it.
	q := `SELECT id, time, session_id, turn_id, tool, undone_by FROM changes WHERE state = 'done' AND workspace = ?`
	args := []any{s.wsAt}
	if sessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, sessionID)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	type change struct {
		id                   int64
		time, sess, turn, tl string
		undoneBy             int64
	}
	var chs []change
	for rows.Next() {
		var c change
		if err := rows.Scan(&c.id, &c.time, &c.sess, &c.turn, &c.tl, &c.undoneBy); err != nil {
			rows.Close()
			return nil, err
		}
		chs = append(chs, c)
	}
	rows.Close()
	var out []Turn
	byTurn := map[string]int{}
	undone := map[string]bool{}
	for _, c := range chs {
		key := c.turn
		if key == "" {
			key = fmt.Sprintf("change-%d", c.id) // a change outside any turn stands alone
		}
		i, ok := byTurn[key]
		if !ok {
			t, _ := time.Parse(time.RFC3339Nano, c.time)
			out = append(out, Turn{TurnID: key, SessionID: c.sess, Time: t})
			i = len(out) - 1
			byTurn[key] = i
			undone[key] = true
		}
		undone[key] = undone[key] && c.undoneBy != 0
		t := &out[i]
		t.changes = append(t.changes, c.id)
		if len(t.Tools) == 0 || t.Tools[len(t.Tools)-1] != c.tl {
			t.Tools = append(t.Tools, c.tl)
		}
		ents, err := s.entries(ctx, c.id)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			after := e.Before
			if e.After != nil {
				after = *e.After
			}
			j := -1
			for k := range t.Files {
				if t.Files[k].Path == e.Path {
					j = k
				}
			}
			if j < 0 {
				t.Files = append(t.Files, FileChange{Path: e.Path, Before: e.Before})
				j = len(t.Files) - 1
			}
			t.Files[j].After = after
			t.Files[j].last = len(t.changes)*1000 + e.seq
		}
	}
	for i := range out {
		out[i].Undone = undone[out[i].TurnID]
		// A path a turn put back as it found it is no change.
		files := out[i].Files[:0]
		for _, f := range out[i].Files {
			if !f.Before.Equal(f.After) {
				files = append(files, f)
			}
		}
		out[i].Files = files
	}
	return out, nil
}

// Turn returns one turn that changed files.
func (s *Store) Turn(ctx context.Context, turnID string) (Turn, error) {
	all, err := s.List(ctx, "")
	if err != nil {
		return Turn{}, err
	}
	for _, t := range all {
		if t.TurnID == turnID {
			return t, nil
		}
	}
	return Turn{}, fmt.Errorf("%w: %s", ErrNoChanges, turnID)
}

// Conflict is a path whose present state is not what the turn left.
type Conflict struct {
	Path    string `json:"path"`
	Want    State  `json:"want"` // what the turn left
	Current State  `json:"current"`
}

// UndoResult is what Undo did, or would not do.
type UndoResult struct {
	TurnID    string     `json:"turn_id"`
	UndoTurn  string     `json:"undo_turn_id,omitempty"` // the undo's own turn id, to undo the undo
	Change    int64      `json:"change,omitempty"`       // its checkpoint
	Restored  []string   `json:"restored"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// Undo puts the paths of turnID (all, or only those in paths) back to their
// states before the turn, newest change first. A path changed since the turn
// is a conflict: without force nothing is changed and ErrConflict is
// returned with the conflicts. The undo is itself a checkpointed change,
// recorded under the turn id UndoResult.UndoTurn in sessionID.
func (s *Store) Undo(ctx context.Context, turnID string, paths []string, force bool) (UndoResult, error) {
	res := UndoResult{TurnID: turnID, Restored: []string{}}
	t, err := s.Turn(ctx, turnID)
	if err != nil {
		return res, err
	}
	whole := len(paths) == 0
	if whole && t.Undone && !force {
		return res, fmt.Errorf("%w: %s", ErrAlreadyUndone, turnID)
	}
	files := t.Files
	if !whole {
		files = nil
		for _, f := range t.Files {
			for _, p := range paths {
				if p == f.Path {
					files = append(files, f)
				}
			}
		}
		if len(files) != len(paths) {
			return res, fmt.Errorf("%w: %v is not among the files of turn %s", ErrNoChanges, paths, turnID)
		}
	}
	if len(files) == 0 {
		return res, fmt.Errorf("%w: %s", ErrNoChanges, turnID)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].last > files[j].last })
	for _, f := range files {
		cur, err := s.capture(f.Path, false, nil)
		if err != nil {
			return res, fmt.Errorf("checkpoint: %s: %w", f.Path, err)
		}
		if !cur.Equal(f.After) {
			res.Conflicts = append(res.Conflicts, Conflict{Path: f.Path, Want: f.After, Current: cur})
		}
	}
	if len(res.Conflicts) > 0 && !force {
		return res, fmt.Errorf("%w: %d file(s); nothing was changed", ErrConflict, len(res.Conflicts))
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	res.UndoTurn = "undo-" + hex.EncodeToString(rnd[:])
	ps := make([]string, len(files))
	for i, f := range files {
		ps[i] = f.Path
	}
	p, err := s.Begin(ctx, Meta{SessionID: t.SessionID, TurnID: res.UndoTurn, Tool: "undo", Replaces: true}, ps)
	if err != nil {
		return res, err
	}
	res.Change = p.ID
	var rerr error
	for _, f := range files {
		if err := s.restore(f.Path, f.Before); err != nil {
			rerr = fmt.Errorf("checkpoint: restoring %s: %w", f.Path, err)
			break
		}
		res.Restored = append(res.Restored, f.Path)
	}
	if err := s.Finish(ctx, p); err != nil {
		return res, errors.Join(rerr, err)
	}
	if rerr == nil && whole {
		for _, id := range t.changes {
			if _, err := s.db.ExecContext(ctx, `UPDATE changes SET undone_by = ? WHERE id = ?`, p.ID, id); err != nil {
				return res, fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return res, rerr
}

// ContentOf returns the bytes of a file state of path: from the object
// store, or, for a state only hashed (a change's "after"), from the file at
// path while it still has those bytes.
func (s *Store) ContentOf(path string, st State) ([]byte, error) {
	if st.Kind != File {
		return nil, fmt.Errorf("checkpoint: not a file state")
	}
	b, err := os.ReadFile(s.objectPath(st.Object))
	if err == nil {
		return b, nil
	}
	b, ferr := s.ws.ReadFile(filepath.FromSlash(path))
	if ferr == nil {
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) == st.Object {
			return b, nil
		}
	}
	return nil, fmt.Errorf("checkpoint: the content of %s at that time is no longer kept: %w", path, err)
}

// restore makes rel be st. Each step that replaces something is a rename of
// a fully written sibling, so a crash leaves the old or the new entry.
func (s *Store) restore(rel string, st State) error {
	rel = filepath.FromSlash(rel)
	if st.Kind == None {
		if err := s.ws.RemoveAll(rel); err != nil {
			return err
		}
		return nil
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := s.ws.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".jarvis-undo-"+hex.EncodeToString(rnd[:]))
	if err := s.build(tmp, st); err != nil {
		s.ws.RemoveAll(tmp)
		return err
	}
	if fi, err := s.ws.Lstat(rel); err == nil && (fi.IsDir() || st.Kind == Dir) {
		// A folder cannot be renamed over: move the present entry aside
		// first, then remove it.
		aside := tmp + "-old"
		if err := s.ws.Rename(rel, aside); err != nil {
			s.ws.RemoveAll(tmp)
			return err
		}
		if err := s.ws.Rename(tmp, rel); err != nil {
			s.ws.Rename(aside, rel)
			s.ws.RemoveAll(tmp)
			return err
		}
		return s.ws.RemoveAll(aside)
	}
	if err := s.ws.Rename(tmp, rel); err != nil {
		s.ws.RemoveAll(tmp)
		return err
	}
	return nil
}

// build creates st at rel, which does not exist.
func (s *Store) build(rel string, st State) error {
	switch st.Kind {
	case Symlink:
		return s.ws.Symlink(st.Target, rel)
	case Dir:
		if err := s.ws.Mkdir(rel, 0o700); err != nil {
			return err
		}
		for _, c := range st.Children {
			if err := s.build(filepath.Join(rel, c.Name), c.State); err != nil {
				return err
			}
		}
		return s.ws.Chmod(rel, st.Mode)
	case File:
		in, err := os.Open(s.objectPath(st.Object))
		if err != nil {
			return fmt.Errorf("the stored content is gone (pruned?): %w", err)
		}
		defer in.Close()
		f, err := s.ws.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, werr := io.Copy(f, in)
		return errors.Join(werr, f.Chmod(st.Mode), f.Close())
	case None:
		return nil
	}
	return fmt.Errorf("unknown state kind %q", st.Kind)
}
