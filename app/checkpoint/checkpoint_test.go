package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"jarvis/tools"
)

// env is a workspace, a trash, the real executor and a store.
type env struct {
	t     *testing.T
	ws    string
	x     *tools.Executor
	st    *Store
	store string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ws, data := t.TempDir(), t.TempDir()
	x, err := tools.NewExecutor(tools.Options{Workspace: ws, TrashDir: filepath.Join(data, "trash"), MaxWriteBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	e := &env{t: t, ws: ws, x: x, store: filepath.Join(data, "checkpoints")}
	e.reopen()
	return e
}

func (e *env) reopen() {
	e.t.Helper()
	if e.st != nil {
		e.st.Close()
	}
	st, err := Open(e.store, e.ws, Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.st = st
	e.t.Cleanup(func() { st.Close() })
}

// call runs a tool through the executor with a checkpoint, in turn.
func (e *env) call(turn, tool string, args any) {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	p, err := e.x.Prepare(tool, raw)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _, err = e.st.Guard(context.Background(), Meta{SessionID: "s1", TurnID: turn, Tool: tool, Replaces: p.Replaces()}, p.Changes(), func() (string, error) {
		return p.Run(context.Background())
	})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
}

func (e *env) write(rel string, data []byte, mode os.FileMode) {
	e.t.Helper()
	p := filepath.Join(e.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		e.t.Fatal(err)
	}
}

// snapshot is the workspace's exact content: path → mode and bytes.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	filepath.WalkDir(e.ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			e.t.Fatal(err)
		}
		r, _ := filepath.Rel(e.ws, p)
		fi, _ := d.Info()
		switch {
		case d.Type()&os.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			out[r] = "link:" + t
		case d.IsDir():
			out[r] = fi.Mode().String()
		default:
			b, _ := os.ReadFile(p)
			out[r] = fi.Mode().String() + ":" + string(b)
		}
		return nil
	})
	return out
}

func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUndoRestoresExactBytesAndModes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.write("notes.txt", []byte("line one\nline two\n"), 0o640)
	e.write("script.sh", []byte("#!/bin/sh\necho hi\n"), 0o750)
	e.write("photo.bin", append([]byte{0, 1, 2, 0xff}, random(t, 4096)...), 0o600)
	e.write("big.dat", random(t, 50<<20), 0o644) // 50 MB
	e.write("dir/a.txt", []byte("A"), 0o604)
	if err := os.Chmod(filepath.Join(e.ws, "dir"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	before := e.snapshot()

	e.call("t1", "write_file", map[string]string{"path": "script.sh", "content": "rm -rf /\n"})
	e.call("t1", "write_file", map[string]string{"path": "new/created.txt", "content": "fresh"})
	e.call("t1", "edit_file", map[string]any{"path": "notes.txt", "old_string": "one", "new_string": "1"})
	e.call("t1", "edit_file", map[string]any{"path": "notes.txt", "old_string": "two", "new_string": "2"})
	e.call("t1", "move_path", map[string]any{"from": "photo.bin", "to": "moved/photo.bin"})
	e.call("t1", "move_path", map[string]any{"from": "big.dat", "to": "notes.txt", "overwrite": true})
	e.call("t1", "delete_path", map[string]string{"path": "dir"})
	e.call("t1", "delete_path", map[string]string{"path": "link"})
	e.call("t1", "make_dir", map[string]string{"path": "made/deep"})
	if reflect.DeepEqual(e.snapshot(), before) {
		t.Fatal("the calls changed nothing")
	}

	turns, err := e.st.List(ctx, "s1")
	if err != nil || len(turns) != 1 || turns[0].TurnID != "t1" {
		t.Fatalf("list: %+v %v", turns, err)
	}
	var files []string
	for _, f := range turns[0].Files {
		files = append(files, f.Path)
	}
	// A new path whose folder did not exist is recorded as its outermost
	// new folder, which undo removes.
	want := []string{"script.sh", "new", "notes.txt", "photo.bin", "moved", "big.dat", "dir", "link", "made"}
	if !reflect.DeepEqual(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}

	res, err := e.st.Undo(ctx, "t1", nil, false)
	if err != nil {
		t.Fatalf("undo: %v (%+v)", err, res)
	}
	after := e.snapshot()
	if !reflect.DeepEqual(after, before) {
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s: got %.60q want %.60q", k, after[k], v)
			}
		}
		for k := range after {
			if _, ok := before[k]; !ok {
				t.Errorf("extra %s", k)
			}
		}
		t.Fatal("undo did not restore the workspace exactly")
	}
	// Undone once; again is refused, and nothing changes.
	if _, err := e.st.Undo(ctx, "t1", nil, false); !errors.Is(err, ErrAlreadyUndone) {
		t.Fatalf("second undo: %v", err)
	}
	// The undo is itself undoable: undoing it brings the turn's result back.
	if _, err := e.st.Undo(ctx, res.UndoTurn, nil, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "script.sh")); string(b) != "rm -rf /\n" {
		t.Fatalf("undo of the undo: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(e.ws, "notes.txt")); err != nil || fi.Size() != 50<<20 {
		t.Fatalf("undo of the undo: big file not back at notes.txt: %v", err)
	}
}

func TestUndoConflict(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.write("a.txt", []byte("original"), 0o644)
	e.write("b.txt", []byte("bee"), 0o644)
	e.call("t1", "write_file", map[string]string{"path": "a.txt", "content": "by the model"})
	e.call("t1", "edit_file", map[string]any{"path": "b.txt", "old_string": "bee", "new_string": "BEE"})
	// The user edits a.txt afterwards.
	e.write("a.txt", []byte("the user's own words"), 0o644)
	before := e.snapshot()

	res, err := e.st.Undo(ctx, "t1", nil, false)
	if !errors.Is(err, ErrConflict) || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "a.txt" {
		t.Fatalf("undo over a conflict: %v %+v", err, res)
	}
	if !reflect.DeepEqual(e.snapshot(), before) {
		t.Fatal("a refused undo changed files")
	}
	// Restoring just the other file is no conflict.
	if _, err := e.st.Undo(ctx, "t1", []string{"b.txt"}, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "b.txt")); string(b) != "bee" {
		t.Fatalf("per-file restore: %q", b)
	}
	// Forced, the user's change is replaced, and that is undoable too.
	res, err = e.st.Undo(ctx, "t1", []string{"a.txt"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "original" {
		t.Fatalf("forced: %q", b)
	}
	if _, err := e.st.Undo(ctx, res.UndoTurn, nil, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "the user's own words" {
		t.Fatalf("undo of a forced undo: %q", b)
	}
}

func TestObjectsAreDeduplicatedAndSettledAfterACrash(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	same := bytes.Repeat([]byte("same bytes "), 1000)
	e.write("x", same, 0o644)
	e.write("y", same, 0o644)
	e.call("t1", "write_file", map[string]string{"path": "x", "content": "1"})
	e.call("t2", "write_file", map[string]string{"path": "y", "content": "2"})
	n := 0
	filepath.WalkDir(filepath.Join(e.store, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) != "tmp" {
			n++
		}
		return nil
	})
	// x and y held the same bytes: one object. The new contents "1" and
	// "2" are hashed, not stored, until a later change needs them.
	if n != 1 {
		t.Fatalf("%d objects, want 1", n)
	}

	// A change begun but never finished (the process was killed) is
	// settled at the next open by looking at the file.
	p, err := e.st.Begin(ctx, Meta{TurnID: "t3", Tool: "write_file"}, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	e.write("x", []byte("new after the checkpoint"), 0o644)
	q, err := e.st.Begin(ctx, Meta{TurnID: "t4", Tool: "write_file"}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	_ = q // killed before y changed
	e.reopen()
	var s3, s4 string
	e.st.db.QueryRow(`SELECT state FROM changes WHERE turn_id = 't3'`).Scan(&s3)
	e.st.db.QueryRow(`SELECT state FROM changes WHERE turn_id = 't4'`).Scan(&s4)
	if s3 != "done" || s4 != "unchanged" {
		t.Fatalf("settled states %q %q", s3, s4)
	}
	if _, err := e.st.Undo(ctx, "t3", nil, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "x")); string(b) != "1" {
		t.Fatalf("after undo of the settled change: %q", b)
	}
}

// TestAnotherWorkspaceSeesNoTurns: the paths of a change are relative to
// the workspace it was made in; the store opened on another folder lists
// none of them and undoes nothing there.
func TestAnotherWorkspaceSeesNoTurns(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", []byte("A"), 0o644)
	e.call("t1", "write_file", map[string]string{"path": "a.txt", "content": "B"})
	other := t.TempDir()
	st, err := Open(e.store, other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ts, err := st.List(context.Background(), ""); err != nil || len(ts) != 0 {
		t.Fatalf("other workspace lists %+v %v", ts, err)
	}
	if _, err := st.Undo(context.Background(), "t1", nil, true); !errors.Is(err, ErrNoChanges) {
		t.Fatalf("undo in another workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("undo wrote into another workspace")
	}
}
