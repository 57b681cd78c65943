//go:build unix

package fsperm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepairCreateAndRefuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	if err := os.WriteFile(db+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Dir(dir); err != nil {
		t.Fatal(err)
	}
	if err := File(db, true); err != nil {
		t.Fatal(err)
	}
	if err := File(filepath.Join(dir, "absent"), false); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: DirMode, db: FileMode, db + "-wal": FileMode} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent")); err == nil {
		t.Error("File without create made a file")
	}
	link := filepath.Join(dir, "token")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	if err := File(link, false); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink in a data file's place: %v", err)
	}
	notDir := filepath.Join(dir, "x.db")
	if err := Dir(notDir); err == nil {
		t.Error("a file accepted as the data dir")
	}
}
