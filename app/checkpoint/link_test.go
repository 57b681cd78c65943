//go:build linux

package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"jarvis/tools"
)

// beforeObject is the object file of the first path of turn's change.
func (e *env) beforeObject(turn string) (string, os.FileInfo) {
	e.t.Helper()
	tr, err := e.st.Turn(context.Background(), turn)
	if err != nil {
		e.t.Fatal(err)
	}
	p := e.st.objectPath(tr.Files[0].Before.Object)
	fi, err := os.Lstat(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return p, fi
}

func (e *env) sameBytes(p string, want []byte) {
	e.t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		e.t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		e.t.Fatalf("%s: %d bytes, not the %d expected", p, len(got), len(want))
	}
}

// TestLinkPathKeepsTheOldInode: a write_file replaces the file by a new
// inode, so its checkpoint keeps the old inode itself (no copy), alone;
// undo after the path was overwritten restores the exact bytes and mode.
func TestLinkPathKeepsTheOldInode(t *testing.T) {
	e := newEnv(t)
	old := random(t, 1<<20)
	e.write("doc.bin", old, 0o640)
	orig, _ := os.Stat(filepath.Join(e.ws, "doc.bin"))
	e.call("t1", "write_file", map[string]string{"path": "doc.bin", "content": "overwritten"})
	e.call("t2", "edit_file", map[string]any{"path": "doc.bin", "old_string": "over", "new_string": "re"})

	obj, fi := e.beforeObject("t1")
	if !os.SameFile(orig, fi) {
		t.Fatal("the checkpoint copied the file; the old inode was expected to be kept")
	}
	if n := links(fi); n != 1 {
		t.Fatalf("the kept inode has %d names after the change, want the store's alone", n)
	}
	e.sameBytes(obj, old)

	if _, err := e.st.Undo(context.Background(), "t2", nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Undo(context.Background(), "t1", nil, false); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(filepath.Join(e.ws, "doc.bin"), old)
	now, _ := os.Stat(filepath.Join(e.ws, "doc.bin"))
	if now.Mode().Perm() != 0o640 {
		t.Fatalf("restored mode %v, want 0640", now.Mode().Perm())
	}
	if os.SameFile(now, fi) {
		t.Fatal("the restored file shares the object's inode")
	}
}

// TestSharedInodeTakesTheCopyPath: a file with another name (nlink > 1)
// could be changed through that name after the change, so its bytes are
// copied; writing through the other name later does not touch them.
func TestSharedInodeTakesTheCopyPath(t *testing.T) {
	e := newEnv(t)
	old := random(t, 64<<10)
	e.write("shared.bin", old, 0o600)
	other := filepath.Join(t.TempDir(), "other-name")
	if err := os.Link(filepath.Join(e.ws, "shared.bin"), other); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	e.call("t1", "write_file", map[string]string{"path": "shared.bin", "content": "new"})
	obj, fi := e.beforeObject("t1")
	ofi, _ := os.Stat(other)
	if os.SameFile(fi, ofi) {
		t.Fatal("an inode with two names was linked into the store")
	}
	if err := os.WriteFile(other, []byte("changed through the other name"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(obj, old)
	if _, err := e.st.Undo(context.Background(), "t1", nil, false); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(filepath.Join(e.ws, "shared.bin"), old)
}

// TestLinkedObjectIsUnsharedWhenTheFileStays: when the change fails
// without replacing the file, or the process dies before Finish, the
// object still shares the workspace file's inode; Finish, or the settling
// at the next open, replaces it by a copy before anything can write
// through the workspace name.
func TestLinkedObjectIsUnsharedWhenTheFileStays(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	old := random(t, 256<<10)
	e.write("a.bin", old, 0o644)
	e.write("b.bin", old[:1000], 0o644)
	path := filepath.Join(e.ws, "a.bin")
	_, _, err := e.st.Guard(ctx, Meta{TurnID: "t1", Tool: "write_file", Replaces: true}, []string{"a.bin"}, func() (string, error) {
		fi, _ := os.Stat(path)
		if links(fi) != 2 {
			t.Errorf("during the change the file has %d names, want 2 (linked into the store)", links(fi))
		}
		return "", errors.New("the write failed")
	})
	if err == nil {
		t.Fatal("the change's error was lost")
	}
	// Killed between Begin and the change: settled at the next open.
	if _, err := e.st.Begin(ctx, Meta{TurnID: "t2", Tool: "write_file", Replaces: true}, []string{"b.bin"}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(e.ws, "b.bin")); links(fi) != 2 {
		t.Fatalf("b.bin has %d names after Begin, want 2", links(fi))
	}
	e.reopen()
	for _, c := range []struct{ name, turn string }{{"a.bin", "t1"}, {"b.bin", "t2"}} {
		fi, _ := os.Stat(filepath.Join(e.ws, c.name))
		if links(fi) != 1 {
			t.Fatalf("%s still has %d names", c.name, links(fi))
		}
		var n int
		e.st.db.QueryRow(`SELECT count(*) FROM changes WHERE turn_id = ? AND state = 'unchanged'`, c.turn).Scan(&n)
		if n != 1 {
			t.Fatalf("turn %s was not settled as unchanged", c.turn)
		}
	}
	// Written in place through the workspace name: the objects keep the
	// bytes they are named after.
	if err := os.WriteFile(path, []byte("in place"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before string
	e.st.db.QueryRow(`SELECT before FROM entries JOIN changes ON changes.id = change_id WHERE turn_id = 't1'`).Scan(&before)
	var st State
	if err := json.Unmarshal([]byte(before), &st); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(e.st.objectPath(st.Object), old)
}

// TestOtherFilesystemTakesTheCopyPath: the store cannot link a workspace
// on another filesystem (EXDEV); the checkpoint copies and undo works.
func TestOtherFilesystemTakesTheCopyPath(t *testing.T) {
	var a, b syscall.Statfs_t
	shm := "/dev/shm"
	if syscall.Statfs(shm, &a) != nil || syscall.Statfs(os.TempDir(), &b) != nil || a.Type == b.Type {
		t.Skip("no second filesystem (/dev/shm) to put the workspace on")
	}
	ws, err := os.MkdirTemp(shm, "jarvis-checkpoint-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	e := &env{t: t, ws: ws, store: filepath.Join(t.TempDir(), "checkpoints")}
	x, err := tools.NewExecutor(tools.Options{Workspace: ws, MaxWriteBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	e.x = x
	e.reopen()
	old := random(t, 4096)
	e.write("f", old, 0o604)
	e.call("t1", "write_file", map[string]string{"path": "f", "content": "new"})
	obj, _ := e.beforeObject("t1")
	e.sameBytes(obj, old)
	if !e.st.noLink.Load() {
		t.Fatal("the store keeps trying to link across filesystems")
	}
	if _, err := e.st.Undo(context.Background(), "t1", nil, false); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(filepath.Join(ws, "f"), old)
}

// TestOrphanLinkIsNotDeduplicatedOnto: a process killed after linking a
// file into the store but before recording its change leaves an object
// that still is the workspace file. Written in place afterwards, its bytes
// no longer match its name; a later checkpoint of other bytes with that
// name must not refer to it.
func TestOrphanLinkIsNotDeduplicatedOnto(t *testing.T) {
	e := newEnv(t)
	x := random(t, 8192)
	e.write("f", x, 0o644)
	sum := sha256.Sum256(x)
	obj := e.st.objectPath(hex.EncodeToString(sum[:]))
	if err := os.Link(filepath.Join(e.ws, "f"), obj); err != nil { // what the kill left
		t.Fatal(err)
	}
	w, err := os.OpenFile(filepath.Join(e.ws, "f"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt([]byte("written in place"), 0)
	w.Close()

	e.write("g", x, 0o600)
	e.call("t1", "write_file", map[string]string{"path": "g", "content": "new"})
	if _, err := e.st.Undo(context.Background(), "t1", nil, false); err != nil {
		t.Fatal(err)
	}
	e.sameBytes(filepath.Join(e.ws, "g"), x)
	fi, err := os.Lstat(obj)
	if err != nil || links(fi) != 1 {
		t.Fatalf("object %v %v: want it the store's alone", fi, err)
	}
}
