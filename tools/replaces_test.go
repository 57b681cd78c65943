package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReplacesIsTruthful: the calls that report Replaces never write into
// the file they change: after them the path names a new inode and the old
// one still holds the old bytes (a checkpoint may have kept that inode as
// its copy of them). The others do not claim it.
func TestReplacesIsTruthful(t *testing.T) {
	ws := t.TempDir()
	x, err := NewExecutor(Options{Workspace: ws, MaxWriteBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, c := range []struct{ tool, args string }{
		{"write_file", `{"path":"f.txt","content":"written"}`},
		{"edit_file", `{"path":"f.txt","old_string":"old","new_string":"edited"}`},
	} {
		p := filepath.Join(ws, "f.txt")
		mkfile(t, p, "old text")
		old, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := old.Stat()
		pr, err := x.Prepare(c.tool, json.RawMessage(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if !pr.Replaces() {
			t.Fatalf("%s does not report Replaces", c.tool)
		}
		if _, err := pr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(p)
		buf := make([]byte, 64)
		n, _ := old.ReadAt(buf, 0)
		old.Close()
		if os.SameFile(before, after) || string(buf[:n]) != "old text" {
			t.Fatalf("%s wrote into the old file (same inode: %v, old inode now %q)", c.tool, os.SameFile(before, after), buf[:n])
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"move_path", `{"from":"f.txt","to":"g.txt"}`},
		{"make_dir", `{"path":"d"}`},
	} {
		pr, err := x.Prepare(c.tool, json.RawMessage(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if pr.Replaces() {
			t.Fatalf("%s claims Replaces", c.tool)
		}
	}
}
