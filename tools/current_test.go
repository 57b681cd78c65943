package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CurrentFile reads a workspace file as the file tools would find it, up to
// a limit with the full size, and refuses what the tools refuse: a path
// out of the workspace (by "..", absolute or through a symlink) and a
// folder; a missing file is fs.ErrNotExist.
func TestCurrentFile(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	x := newExec(t, ws, nil, nil)
	mkfile(t, filepath.Join(ws, "notes.txt"), "hello world")
	mkfile(t, filepath.Join(outside, "secret.txt"), "not yours")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if b, size, err := x.CurrentFile("notes.txt", 5); err != nil || string(b) != "hello" || size != 11 {
		t.Fatalf("notes: %q %d %v", b, size, err)
	}
	if b, _, err := x.CurrentFile(filepath.Join(ws, "notes.txt"), 100); err != nil || string(b) != "hello world" {
		t.Fatalf("absolute inside: %q %v", b, err)
	}
	if _, _, err := x.CurrentFile("missing.txt", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	for _, p := range []string{"link.txt", "../" + filepath.Base(outside) + "/secret.txt", filepath.Join(outside, "secret.txt")} {
		if b, _, err := x.CurrentFile(p, 100); !errors.Is(err, ErrOutsideWorkspace) || b != nil {
			t.Fatalf("%s: %q %v", p, b, err)
		}
	}
	if _, _, err := x.CurrentFile("dir", 10); !errors.Is(err, ErrBadArguments) {
		t.Fatalf("folder: %v", err)
	}
}
