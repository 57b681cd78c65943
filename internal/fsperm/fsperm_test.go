//go:build unix

package fsperm

import (
	"os"
	"path/filepath"
	"runtime"
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

func TestWriteFileReplacesAtomically(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	st, _ := os.Stat(p)
	if err != nil || string(b) != "new" || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) {
		t.Fatalf("%q %v %v", b, err, st.Mode())
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".state.json-*"))
	if len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Fatalf("SyncDir(%s) = %v", dir, err)
	}
	// A folder that is not there is an error where the answer counts.
	if err := SyncDir(filepath.Join(dir, "gone")); runtime.GOOS == "linux" && err == nil {
		t.Fatal("SyncDir of a missing folder reported no error")
	}
}
