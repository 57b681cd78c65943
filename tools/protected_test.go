package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFileToolsRefuseTheDataDir: a workspace that contains Jarvis's data
// dir (say the home folder) must not expose it: the model could read the
// API token or rewrite policy.json. Every spelling that reaches it (plain,
// absolute, through a symlink, a file not yet there) is refused, and the
// rest of the workspace still works.
func TestFileToolsRefuseTheDataDir(t *testing.T) {
	ws := t.TempDir()
	data := filepath.Join(ws, ".local", "share", "jarvis")
	mkfile(t, filepath.Join(data, "token"), "secret-token\n")
	mkfile(t, filepath.Join(data, "policy.json"), "{}\n")
	mkfile(t, filepath.Join(ws, "notes.txt"), "hello\n")
	if err := os.Symlink(data, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	x := newExec(t, ws, nil, func(o *Options) { o.Protected = []string{data} })
	calls := []struct{ tool, args string }{
		{"read_file", `{"path":".local/share/jarvis/token"}`},
		{"read_file", `{"path":` + jsonString(filepath.Join(data, "token")) + `}`},
		{"read_file", `{"path":"link/token"}`},
		{"read_file", `{"path":"./.local//share/jarvis/token"}`},
		{"write_file", `{"path":".local/share/jarvis/policy.json","content":"{\"rules\":[]}"}`},
		{"write_file", `{"path":".local/share/jarvis/new.txt","content":"x"}`},
		{"list_dir", `{"path":".local/share/jarvis"}`},
		{"list_dir", `{"path":"link"}`},
	}
	for _, c := range calls {
		out, err := x.Execute(context.Background(), c.tool, json.RawMessage(c.args))
		if !errors.Is(err, ErrNotAllowed) || strings.Contains(out, "secret-token") {
			t.Errorf("%s %s: %q, %v; want ErrNotAllowed", c.tool, c.args, out, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(data, "policy.json")); string(b) != "{}\n" {
		t.Errorf("policy.json was rewritten: %q", b)
	}
	if out, err := x.Execute(context.Background(), "read_file", json.RawMessage(`{"path":"notes.txt"}`)); err != nil || !strings.Contains(out, "hello") {
		t.Errorf("the rest of the workspace: %q, %v", out, err)
	}
	if _, err := x.Execute(context.Background(), "list_dir", json.RawMessage(`{"path":".local/share"}`)); err != nil {
		t.Errorf("the data dir's parent: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestProtectedPathsFollowARename: the sandbox of the programs Jarvis
// starts asks Paths for where the protected folders are now; after a
// rename of an ancestor behind Jarvis's back, Linux tells the new place.
func TestProtectedPathsFollowARename(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(ws, ".config", "jarvis")
	mkfile(t, filepath.Join(cfg, "secrets.json"), "{}")
	p := NewProtected(cfg, filepath.Join(ws, "not-yet"))
	defer p.Close()
	if err := os.Rename(filepath.Join(ws, ".config"), filepath.Join(ws, ".c2")); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Paths(), "\n")
	if runtime.GOOS == "linux" && !strings.Contains(got, filepath.Join(ws, ".c2", "jarvis")) {
		t.Errorf("Paths after the rename: %s", got)
	}
	if !strings.Contains(got, filepath.Join(ws, "not-yet")) {
		t.Errorf("an entry that does not exist yet is kept by its path: %s", got)
	}
	if !p.Holds(ws, filepath.Join(ws, ".c2", "jarvis", "secrets.json")) || !p.Ancestor(filepath.Join(ws, ".c2")) {
		t.Error("the renamed folder is not protected")
	}
	if p.Holds(ws, filepath.Join(ws, ".c2", "other")) || p.Ancestor(filepath.Join(ws, ".c2", "other")) {
		t.Error("a sibling of the protected folder is refused")
	}
	// An entry created after the start is held by identity from then on.
	mkfile(t, filepath.Join(ws, "not-yet", "f"), "x")
	if !p.Holds(ws, filepath.Join(ws, "not-yet", "f")) {
		t.Error("an entry created later is not protected")
	}
	if err := os.Rename(filepath.Join(ws, "not-yet"), filepath.Join(ws, "later")); err != nil {
		t.Fatal(err)
	}
	if !p.Holds(ws, filepath.Join(ws, "later", "f")) {
		t.Error("an entry created later and renamed is not protected")
	}
}
