package app

// Undo: every call that changes files runs with a checkpoint of their
// previous state (package checkpoint), its audit row names the checkpoint,
// and a turn's changes can be taken back, from the window (the bindings
// below) or from the command line (UndoCommand, undocli.go). The undo is
// audited and is itself a checkpointed change, so it can be undone too.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/checkpoint"
	"jarvis/app/gate"
	"jarvis/tools"
)

// Folders of the data dir the undo machinery owns.
const (
	CheckpointDir = "checkpoints" // the checkpoint store
	TrashDir      = "trash"       // where delete_path moves what it deletes
)

// openCheckpoints opens the data dir's checkpoint store and applies the
// retention caps to it and to the trash once at start.
func openCheckpoints(dataDir, workspace string, keep checkpoint.Retention, log *slog.Logger) (*checkpoint.Store, error) {
	st, err := checkpoint.Open(filepath.Join(dataDir, CheckpointDir), workspace, checkpoint.Options{})
	if err != nil {
		return nil, err
	}
	if rep, err := st.Prune(context.Background(), keep); err != nil {
		log.Warn("pruning checkpoints failed", "err", err)
	} else if rep.Changes > 0 {
		log.Info("old checkpoints pruned", "changes", rep.Changes, "freed_bytes", rep.Bytes)
	}
	if n, err := checkpoint.PruneTrash(filepath.Join(dataDir, TrashDir), keep, time.Now()); err != nil {
		log.Warn("emptying the trash failed", "err", err)
	} else if n > 0 {
		log.Info("old trash emptied", "entries", n)
	}
	return st, nil
}

// checkpointed is the gate's exec for one call: a call that changes files
// runs inside a checkpoint of them, and the gate's audit row gets its
// reference. Other calls run as they are.
func (r *Runner) checkpointed(sessionID string, call api.ToolCall) gate.ExecFunc {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		p, err := r.x.Prepare(name, args)
		if err != nil {
			return "", err
		}
		paths := p.Changes()
		if len(paths) == 0 {
			return p.Run(ctx)
		}
		m := checkpoint.Meta{SessionID: sessionID, TurnID: call.TurnID, CallID: call.ID, Tool: name, Replaces: p.Replaces()}
		out, id, err := r.cps.Guard(ctx, m, paths, func() (string, error) { return p.Run(ctx) })
		if id != 0 {
			audit.SetCheckpoint(ctx, checkpoint.Ref(id))
		}
		return out, err
	}
}

// Checkpoints returns the runner's checkpoint store.
func (r *Runner) Checkpoints() *checkpoint.Store { return r.cps }

// Undo takes back the changes of turnID (all its files, or only files),
// refusing on a conflict unless force, and records the undo in the audit
// log with its own checkpoint.
func (r *Runner) Undo(ctx context.Context, turnID string, files []string, force bool) (checkpoint.UndoResult, error) {
	return undoAudited(ctx, r.cps, r.log, turnID, files, force)
}

func undoAudited(ctx context.Context, st *checkpoint.Store, lg *audit.Log, turnID string, files []string, force bool) (checkpoint.UndoResult, error) {
	start := time.Now()
	res, err := st.Undo(ctx, turnID, files, force)
	if errors.Is(err, checkpoint.ErrNoChanges) || errors.Is(err, checkpoint.ErrAlreadyUndone) {
		return res, err // nothing to take back: no row
	}
	args, _ := json.Marshal(map[string]any{"turn_id": turnID, "files": files, "force": force})
	e := audit.Entry{Tool: "undo", Arguments: args, Class: string(tools.Risky), Decision: audit.Allowed, DecidedBy: audit.ByUser,
		Reason: "undo asked by the user", DurationMS: time.Since(start).Milliseconds()}
	if res.Change != 0 {
		e.Checkpoint = checkpoint.Ref(res.Change)
	}
	if err != nil {
		e.Error = err.Error()
		if errors.Is(err, checkpoint.ErrConflict) {
			// Stopped to ask; "Keep them" is the user's choice, not a denial.
			e.Decision, e.Reason = audit.Held, "undo asked by the user; stopped to ask: files changed since the turn"
		}
	} else {
		b, _ := json.Marshal(res)
		e.Result = string(b)
	}
	if _, aerr := lg.Append(context.WithoutCancel(ctx), e); aerr != nil {
		return res, errors.Join(err, fmt.Errorf("audit: %w", aerr))
	}
	return res, err
}

// UndoStorage is what the settings show about the checkpoints and the
// trash: their caps, what they hold, and where.
type UndoStorage struct {
	MaxBytes      int64  `json:"maxBytes"`
	MaxAgeDays    int    `json:"maxAgeDays"`
	Checkpoints   int    `json:"checkpoints"`
	UsedBytes     int64  `json:"usedBytes"`
	TrashBytes    int64  `json:"trashBytes"`
	CheckpointDir string `json:"checkpointDir"`
	TrashDir      string `json:"trashDir"`
}

// Storage reports the checkpoints' and the trash's caps and use.
func (r *Runner) Storage(ctx context.Context) (UndoStorage, error) {
	u, err := r.cps.Usage(ctx)
	if err != nil {
		return UndoStorage{}, err
	}
	trash := filepath.Join(r.dataDir, TrashDir)
	var tb int64
	filepath.WalkDir(trash, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				tb += fi.Size()
			}
		}
		return nil
	})
	return UndoStorage{MaxBytes: r.keep.MaxBytes, MaxAgeDays: int(r.keep.MaxAge / (24 * time.Hour)), Checkpoints: u.Changes,
		UsedBytes: u.Bytes, TrashBytes: tb, CheckpointDir: r.cps.Dir(), TrashDir: trash}, nil
}

// Undoer is a ToolRunner that keeps checkpoints (*Runner).
type Undoer interface {
	Checkpoints() *checkpoint.Store
	Undo(ctx context.Context, turnID string, files []string, force bool) (checkpoint.UndoResult, error)
	Storage(ctx context.Context) (UndoStorage, error)
}

// UndoStorage returns the checkpoints' and the trash's caps and use, for
// the settings.
func (a *App) UndoStorage() (UndoStorage, error) {
	u, err := a.undoer()
	if err != nil {
		return UndoStorage{}, err
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	return u.Storage(ctx)
}

func (a *App) undoer() (Undoer, error) {
	u, ok := a.tools.(Undoer)
	if !ok || u == nil {
		return nil, errors.New("this window keeps no checkpoints")
	}
	return u, nil
}

// ChangedTurns lists the turns that changed files, of sessionID ("" for
// every session), oldest first: the transcript's "N files changed".
func (a *App) ChangedTurns(sessionID string) ([]checkpoint.Turn, error) {
	u, err := a.undoer()
	if err != nil {
		return nil, err
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	ts, err := u.Checkpoints().List(ctx, sessionID)
	if ts == nil {
		ts = []checkpoint.Turn{}
	}
	return ts, err
}

// UndoOutcome is UndoTurn's answer to the window: a conflict is an answer
// (shown, then asked), not an error.
type UndoOutcome struct {
	checkpoint.UndoResult
	Conflict bool   `json:"conflict,omitempty"`
	Error    string `json:"error,omitempty"`
}

// UndoTurn takes back a turn's changes: every file, or only files (a
// per-file restore). On a conflict without force nothing changes and the
// outcome lists the conflicts.
func (a *App) UndoTurn(turnID string, files []string, force bool) (UndoOutcome, error) {
	u, err := a.undoer()
	if err != nil {
		return UndoOutcome{}, err
	}
	ctx, cancel := context.WithTimeout(a.ctx, 5*time.Minute)
	defer cancel()
	res, err := u.Undo(ctx, turnID, files, force)
	out := UndoOutcome{UndoResult: res}
	if err != nil {
		out.Error = err.Error()
		out.Conflict = errors.Is(err, checkpoint.ErrConflict)
	}
	if len(res.Restored) > 0 {
		undoChanged(a.emit, turnID)
	}
	return out, nil
}

// undoChanged tells the window that turnID's files were restored (its
// changed-files blocks refresh).
func undoChanged(emit func(event string, data any), turnID string) {
	emit("undo:changed", map[string]string{"turnId": turnID})
}

// FileDiff is the two sides of one changed file, for the diff view.
type FileDiff struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
	// Binary is set when either side is not text (or too large to show):
	// the view shows sizes instead.
	Binary bool `json:"binary,omitempty"`
	// Gone is set when a side's bytes are no longer kept (a state after
	// the turn that has since changed again, or pruned).
	Gone       bool   `json:"gone,omitempty"`
	BeforeKind string `json:"beforeKind"`
	AfterKind  string `json:"afterKind"`
	BeforeSize int64  `json:"beforeSize"`
	AfterSize  int64  `json:"afterSize"`
}

// diffCap is the largest side the diff view is given.
const diffCap = 512 << 10

// TurnFileDiff returns the before and after text of one file of a turn.
func (a *App) TurnFileDiff(turnID, path string) (FileDiff, error) {
	u, err := a.undoer()
	if err != nil {
		return FileDiff{}, err
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	t, err := u.Checkpoints().Turn(ctx, turnID)
	if err != nil {
		return FileDiff{}, err
	}
	for _, f := range t.Files {
		// A path inside a folder the turn changed (a file written into a
		// new folder is recorded as that folder): its states are found in
		// the folder's.
		before, after, ok := f.Before, f.After, f.Path == path
		if !ok {
			if rel, in := strings.CutPrefix(path, f.Path+"/"); in && f.After.Kind == checkpoint.Dir {
				before, after, ok = childState(f.Before, rel), childState(f.After, rel), true
				ok = ok && (before.Kind != checkpoint.None || after.Kind != checkpoint.None)
			}
		}
		if !ok {
			continue
		}
		f.Before, f.After = before, after
		d := FileDiff{Path: path, BeforeKind: f.Before.Kind, AfterKind: f.After.Kind, BeforeSize: f.Before.Size, AfterSize: f.After.Size}
		side := func(s checkpoint.State) string {
			if s.Kind != checkpoint.File {
				return ""
			}
			if s.Size > diffCap {
				d.Binary = true
				return ""
			}
			b, err := u.Checkpoints().ContentOf(path, s)
			if err != nil {
				d.Gone = true
				return ""
			}
			if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
				d.Binary = true
				return ""
			}
			return string(b)
		}
		d.Before, d.After = side(f.Before), side(f.After)
		return d, nil
	}
	return FileDiff{}, fmt.Errorf("%s is not among the files turn %s changed", path, turnID)
}

// childState is the state of rel (slash-separated, no "." or "..") inside
// a folder's state; none when it is not there.
func childState(st checkpoint.State, rel string) checkpoint.State {
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." || name == ".." || st.Kind != checkpoint.Dir {
			return checkpoint.State{Kind: checkpoint.None}
		}
		found := false
		for _, c := range st.Children {
			if c.Name == name {
				st, found = c.State, true
				break
			}
		}
		if !found {
			return checkpoint.State{Kind: checkpoint.None}
		}
	}
	return st
}
