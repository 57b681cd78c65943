package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// badCase is one refused call: its arguments and the error it must wrap.
type badCase struct {
	args string
	want error
}

func checkBad(t *testing.T, x *Executor, tool string, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		if _, err := x.Execute(context.Background(), tool, json.RawMessage(c.args)); !errors.Is(err, c.want) {
			t.Errorf("%s %s: err = %v, want %v", tool, c.args, err, c.want)
		}
	}
}

// escapeWorkspace makes a workspace with a symlink "out" to a folder outside
// it holding victim.txt, and returns both folders.
func escapeWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	ws, outside = t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(outside, "victim.txt"), "keep")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditFile(t *testing.T) {
	ws, outside := escapeWorkspace(t)
	x := newExec(t, ws, nil, func(o *Options) { o.MaxWriteBytes = 64 })
	ctx := context.Background()
	p := filepath.Join(ws, "a.txt")
	mkfile(t, p, "one two two three")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}

	out, err := x.Execute(ctx, "edit_file", json.RawMessage(`{"path":"a.txt","old_string":"one","new_string":"1"}`))
	if err != nil || out != "replaced 1 occurrence(s) in a.txt" {
		t.Fatalf("edit: %q %v", out, err)
	}
	out, err = x.Execute(ctx, "edit_file", json.RawMessage(`{"path":"a.txt","old_string":"two","new_string":"2","expected_count":2}`))
	if err != nil || out != "replaced 2 occurrence(s) in a.txt" {
		t.Fatalf("edit twice: %q %v", out, err)
	}
	fi, _ := os.Stat(p)
	if got := readString(t, p); got != "1 2 2 three" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("after edits: %q %v", got, fi.Mode())
	}
	a := x.Assess("edit_file", json.RawMessage(`{"path":"./a.txt","old_string":"x","new_string":"y"}`))
	if string(a.Canonical) != `{"expected_count":1,"new_string":"y","old_string":"x","path":"a.txt"}` || a.Risk != Risky {
		t.Fatalf("assessment %+v %s", a, a.Canonical)
	}
	if p, err := x.Prepare("edit_file", json.RawMessage(`{"path":"a.txt","old_string":"x","new_string":"y"}`)); err != nil || !reflect.DeepEqual(p.Changes(), []string{"a.txt"}) {
		t.Fatalf("changes %v", err)
	}

	mkfile(t, filepath.Join(ws, "bin.dat"), "ab\x00cd")
	mkfile(t, filepath.Join(ws, "big.txt"), strings.Repeat("x", 65))
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	checkBad(t, x, "edit_file", []badCase{
		{`{"path":"a.txt","old_string":"three","new_string":"3","expected_count":2}`, ErrBadArguments}, // count mismatch
		{`{"path":"a.txt","old_string":"absent","new_string":"3"}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"","new_string":"3"}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"1","new_string":"1"}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"1","new_string":"x","expected_count":0}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"1"}`, ErrBadArguments},
		{`{"path":"a.txt","new_string":"1"}`, ErrBadArguments},
		{`{"old_string":"1","new_string":"2"}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"1","new_string":"2","Path":"a.txt"}`, ErrBadArguments},
		{`{"path":"a.txt","old_string":"1","new_string":"2","expected_count":"1"}`, ErrBadArguments},
		{`{"path":"bin.dat","old_string":"ab","new_string":"x"}`, ErrBadArguments}, // binary
		{`{"path":"big.txt","old_string":"x","new_string":"y","expected_count":65}`, ErrBadArguments},
		{`{"path":"dir","old_string":"x","new_string":"y"}`, ErrBadArguments},
		{`{"path":"missing.txt","old_string":"x","new_string":"y"}`, os.ErrNotExist},
		{`{"path":".","old_string":"x","new_string":"y"}`, ErrBadArguments},
		{`{"path":"../a.txt","old_string":"x","new_string":"y"}`, ErrOutsideWorkspace},
		{`{"path":"/etc/hostname","old_string":"x","new_string":"y"}`, ErrOutsideWorkspace},
		{`{"path":"out/victim.txt","old_string":"keep","new_string":"lost"}`, ErrOutsideWorkspace}, // symlink escape
	})
	if got := readString(t, p); got != "1 2 2 three" {
		t.Fatalf("a refused edit changed the file: %q", got)
	}
	if got := readString(t, filepath.Join(ws, "bin.dat")); got != "ab\x00cd" {
		t.Fatalf("binary file changed: %q", got)
	}
	if got := readString(t, filepath.Join(outside, "victim.txt")); got != "keep" {
		t.Fatalf("outside file changed: %q", got)
	}
	_, err = x.Execute(ctx, "edit_file", json.RawMessage(`{"path":"bin.dat","old_string":"ab","new_string":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "binary file") {
		t.Fatalf("binary refusal is not plain: %v", err)
	}
}

func TestMakeDir(t *testing.T) {
	ws, outside := escapeWorkspace(t)
	x := newExec(t, ws, nil, nil)
	ctx := context.Background()
	if out, err := x.Execute(ctx, "make_dir", json.RawMessage(`{"path":"a/b/c"}`)); err != nil || out != "created a/b/c" {
		t.Fatalf("make_dir: %q %v", out, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "a", "b", "c")); err != nil || !fi.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	if out, err := x.Execute(ctx, "make_dir", json.RawMessage(`{"path":"a/b"}`)); err != nil || out != "a/b already exists" {
		t.Fatalf("existing: %q %v", out, err)
	}
	mkfile(t, filepath.Join(ws, "f"), "x")
	checkBad(t, x, "make_dir", []badCase{
		{`{}`, ErrBadArguments},
		{`{"path":"."}`, ErrBadArguments},
		{`{"path":"f"}`, ErrBadArguments},
		{`{"path":"x","mode":"0777"}`, ErrBadArguments},
		{`{"path":"../x"}`, ErrOutsideWorkspace},
		{`{"path":"out/new"}`, ErrOutsideWorkspace},
	})
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("made a folder outside: %v", err)
	}
}

func TestMovePath(t *testing.T) {
	ws, outside := escapeWorkspace(t)
	x := newExec(t, ws, nil, nil)
	ctx := context.Background()
	mkfile(t, filepath.Join(ws, "a.txt"), "A")
	mkfile(t, filepath.Join(ws, "b.txt"), "B")
	mkfile(t, filepath.Join(ws, "d", "inner.txt"), "I")

	if out, err := x.Execute(ctx, "move_path", json.RawMessage(`{"from":"a.txt","to":"sub/renamed.txt"}`)); err != nil || out != "moved a.txt to sub/renamed.txt" {
		t.Fatalf("move: %q %v", out, err)
	}
	if got := readString(t, filepath.Join(ws, "sub", "renamed.txt")); got != "A" {
		t.Fatalf("moved content %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("source still there: %v", err)
	}
	if p, _ := x.Prepare("move_path", json.RawMessage(`{"from":"b.txt","to":"c.txt"}`)); !reflect.DeepEqual(p.Changes(), []string{"b.txt", "c.txt"}) {
		t.Fatalf("changes %v", p.Changes())
	}
	if p, _ := x.Prepare("read_file", json.RawMessage(`{"path":"b.txt"}`)); p.Changes() != nil {
		t.Fatalf("read_file changes %v", p.Changes())
	}
	a := x.Assess("move_path", json.RawMessage(`{"from":"b.txt","to":"sub/renamed.txt","overwrite":true}`))
	if !a.Destructive || !strings.Contains(a.Reason, "replaces") {
		t.Fatalf("overwrite assessment %+v", a)
	}
	if _, err := x.Execute(ctx, "move_path", json.RawMessage(`{"from":"b.txt","to":"sub/renamed.txt","overwrite":true}`)); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(ws, "sub", "renamed.txt")); got != "B" {
		t.Fatalf("overwritten content %q", got)
	}
	// A symlink is moved itself, not its target.
	if err := os.Symlink("d/inner.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Execute(ctx, "move_path", json.RawMessage(`{"from":"link","to":"link2"}`)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "link2")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink not moved as a link: %v", err)
	}
	if got := readString(t, filepath.Join(ws, "d", "inner.txt")); got != "I" {
		t.Fatalf("link target moved: %q", got)
	}
	mkfile(t, filepath.Join(ws, "e.txt"), "E")
	checkBad(t, x, "move_path", []badCase{
		{`{"from":"e.txt","to":"sub/renamed.txt"}`, ErrBadArguments},    // exists, no overwrite
		{`{"from":"e.txt","to":"d","overwrite":true}`, ErrBadArguments}, // never replaces a folder
		{`{"from":"d","to":"d/x"}`, ErrBadArguments},                    // into itself
		{`{"from":"e.txt","to":"e.txt"}`, ErrBadArguments},
		{`{"from":"missing","to":"x"}`, ErrBadArguments},
		{`{"from":"e.txt"}`, ErrBadArguments},
		{`{"to":"x"}`, ErrBadArguments},
		{`{"from":".","to":"x"}`, ErrBadArguments},
		{`{"from":"e.txt","to":"x","overwrite":"yes"}`, ErrBadArguments},
		{`{"from":"e.txt","to":"../x"}`, ErrOutsideWorkspace},
		{`{"from":"e.txt","to":"out/x"}`, ErrOutsideWorkspace},      // into a symlink leading outside
		{`{"from":"out/victim.txt","to":"v"}`, ErrOutsideWorkspace}, // out of it
		{`{"from":"/etc/hostname","to":"h"}`, ErrOutsideWorkspace},
	})
	if got := readString(t, filepath.Join(ws, "e.txt")); got != "E" {
		t.Fatalf("refused move changed the source: %q", got)
	}
	if got := readString(t, filepath.Join(outside, "victim.txt")); got != "keep" {
		t.Fatalf("outside file changed: %q", got)
	}
}

func TestDeletePath(t *testing.T) {
	ws, outside := escapeWorkspace(t)
	trash := t.TempDir()
	x := newExec(t, ws, nil, func(o *Options) { o.TrashDir = trash })
	ctx := context.Background()
	mkfile(t, filepath.Join(ws, "gone.txt"), "G")
	mkfile(t, filepath.Join(ws, "tree", "x", "y.txt"), "Y")

	a := x.Assess("delete_path", json.RawMessage(`{"path":"gone.txt"}`))
	if !a.Destructive || a.Risk != Risky {
		t.Fatalf("assessment %+v", a)
	}
	for _, p := range []string{"gone.txt", "tree"} {
		if _, err := x.Execute(ctx, "delete_path", jsonArgs(t, map[string]string{"path": p})); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(ws, p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still there: %v", p, err)
		}
	}
	// Both are in the trash, whole.
	var found []string
	filepath.WalkDir(trash, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, filepath.Base(p)+"="+readString(t, p))
		}
		return nil
	})
	if !reflect.DeepEqual(found, []string{"gone.txt=G", "y.txt=Y"}) && !reflect.DeepEqual(found, []string{"y.txt=Y", "gone.txt=G"}) {
		t.Fatalf("trash holds %v", found)
	}
	// A symlink leading outside is deleted itself; its target stays.
	if _, err := x.Execute(ctx, "delete_path", json.RawMessage(`{"path":"out"}`)); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(outside, "victim.txt")); got != "keep" {
		t.Fatalf("target of a deleted link changed: %q", got)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	checkBad(t, x, "delete_path", []badCase{
		{`{}`, ErrBadArguments},
		{`{"path":"."}`, ErrBadArguments},
		{`{"path":""}`, ErrBadArguments},
		{`{"path":"missing"}`, ErrBadArguments},
		{`{"path":"gone.txt","force":true}`, ErrBadArguments},
		{`{"path":"../x"}`, ErrOutsideWorkspace},
		{`{"path":"out/victim.txt"}`, ErrOutsideWorkspace},
		{`{"path":"` + filepath.Join(outside, "victim.txt") + `"}`, ErrOutsideWorkspace},
	})
	if got := readString(t, filepath.Join(outside, "victim.txt")); got != "keep" {
		t.Fatalf("outside file changed: %q", got)
	}
	// Without a trash folder nothing is deleted.
	y := newExec(t, ws, nil, nil)
	mkfile(t, filepath.Join(ws, "stay.txt"), "S")
	if _, err := y.Execute(ctx, "delete_path", json.RawMessage(`{"path":"stay.txt"}`)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("no trash: %v", err)
	}
	if got := readString(t, filepath.Join(ws, "stay.txt")); got != "S" {
		t.Fatal("deleted without a trash")
	}
}

func TestDeletePathRefusesDataDir(t *testing.T) {
	ws := t.TempDir()
	data := filepath.Join(ws, ".jarvis")
	mkfile(t, filepath.Join(data, "audit.db"), "log")
	x := newExec(t, ws, nil, func(o *Options) { o.TrashDir = t.TempDir(); o.Protected = []string{data} })
	checkBad(t, x, "delete_path", []badCase{{`{"path":".jarvis"}`, ErrNotAllowed}, {`{"path":".jarvis/audit.db"}`, ErrNotAllowed}})
	checkBad(t, x, "move_path", []badCase{{`{"from":".jarvis","to":"j"}`, ErrNotAllowed}})
	if got := readString(t, filepath.Join(data, "audit.db")); got != "log" {
		t.Fatal("data dir touched")
	}
}

func TestSearchFiles(t *testing.T) {
	ws, _ := escapeWorkspace(t)
	mkfile(t, filepath.Join(ws, "notes", "a.md"), "alpha\nneedle here\nomega")
	mkfile(t, filepath.Join(ws, "notes", "b.txt"), "needle too")
	mkfile(t, filepath.Join(ws, "img.bin"), "needle\x00binary")
	mkfile(t, filepath.Join(ws, ".jarvis", "secret.md"), "needle")
	x := newExec(t, ws, nil, func(o *Options) { o.MaxEntries = 3; o.Protected = []string{filepath.Join(ws, ".jarvis")} })
	run := func(args string) SearchResult {
		t.Helper()
		out, err := x.Execute(context.Background(), "search_files", json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		var r SearchResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(`{"name":"*.md"}`)
	if !reflect.DeepEqual(r.Hits, []SearchHit{{Path: "notes/a.md"}}) {
		t.Fatalf("by name: %+v", r) // the symlink "out" is not followed, .jarvis is skipped
	}
	r = run(`{"content":"needle"}`)
	if !reflect.DeepEqual(r.Hits, []SearchHit{{Path: "notes/a.md", Line: 2, Text: "needle here"}, {Path: "notes/b.txt", Line: 1, Text: "needle too"}}) || r.Skipped != 1 {
		t.Fatalf("by content: %+v", r)
	}
	r = run(`{"path":"notes","name":"*.txt","content":"needle"}`)
	if len(r.Hits) != 1 || r.Hits[0].Path != "notes/b.txt" {
		t.Fatalf("both: %+v", r)
	}
	for i := 0; i < 5; i++ {
		mkfile(t, filepath.Join(ws, "many", strings.Repeat("f", i+1)+".log"), "x")
	}
	if r = run(`{"name":"*.log"}`); len(r.Hits) != 3 || !r.Truncated {
		t.Fatalf("cap: %+v", r)
	}
	if a := x.Assess("search_files", json.RawMessage(`{"name":"*.md"}`)); a.Risk != Safe || string(a.Canonical) != `{"name":"*.md","path":"."}` {
		t.Fatalf("assessment %+v %s", a, a.Canonical)
	}
	checkBad(t, x, "search_files", []badCase{
		{`{}`, ErrBadArguments},
		{`{"name":"["}`, ErrBadArguments},
		{`{"content":"a\nb"}`, ErrBadArguments},
		{`{"name":"*","regex":"x"}`, ErrBadArguments},
		{`{"path":"../","name":"*"}`, ErrOutsideWorkspace},
		{`{"path":"out","name":"*"}`, ErrOutsideWorkspace},
		{`{"path":".jarvis","name":"*"}`, ErrNotAllowed},
	})
}
