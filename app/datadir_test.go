package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/app/audit"
)

// TestToolRunnerGuardsTheDataDir: with a workspace that contains the data
// dir (a home folder, say), the file tools refuse the data dir, and the
// audit log and policy are repaired to mode 0600 at start.
func TestToolRunnerGuardsTheDataDir(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(ws, ".config")) // the audit key folder, inside the workspace too
	data := filepath.Join(ws, "jarvis-data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(data, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"rules":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(data, "token")
	if err := os.WriteFile(token, []byte("secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(data, "audit.db"), PolicyPath: policy})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, args := range []string{`{"path":"jarvis-data/token"}`, `{"path":"jarvis-data/policy.json"}`} {
		out, err := r.x.Execute(context.Background(), "read_file", json.RawMessage(args))
		if err == nil || strings.Contains(out, "secret-token") {
			t.Errorf("read_file %s: %q, %v", args, out, err)
		}
	}
	if _, err := r.x.Execute(context.Background(), "write_file", json.RawMessage(`{"path":"jarvis-data/policy.json","content":"{}"}`)); err == nil {
		t.Error("write_file rewrote policy.json")
	}
	if _, err := os.Stat(filepath.Join(ws, ".config", "jarvis", "audit", "key")); err != nil {
		t.Fatalf("no audit key file where expected: %v", err)
	}
	if out, err := r.x.Execute(context.Background(), "read_file", json.RawMessage(`{"path":".config/jarvis/audit/key"}`)); err == nil {
		t.Errorf("read_file read the audit chain key: %q", out)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for path, want := range map[string]os.FileMode{data: 0o700, policy: 0o600, filepath.Join(data, "audit.db"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", path, fi.Mode().Perm(), want)
		}
	}
}

// TestToolRunnerRunsNothingItCannotAudit: when the audit log no longer
// matches its head anchor (here: deleted and created anew), every call is
// denied before it runs, saying why; the gate would otherwise run it and
// then fail to record it.
func TestToolRunnerRunsNothingItCannotAudit(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws, data := t.TempDir(), t.TempDir()
	auditPath := filepath.Join(data, "audit.db")
	lg, err := audit.Open(auditPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two rows: a log one row short of its anchor is completed from it
	// (what a crash between the anchor and the commit leaves), not refused.
	for range 2 {
		if _, err := lg.Append(context.Background(), audit.Entry{Tool: "notify", Class: "safe", Decision: audit.Allowed, DecidedBy: audit.ByPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	lg.Close()
	for _, f := range []string{auditPath, auditPath + "-wal", auditPath + "-shm"} {
		os.Remove(f)
	}
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// list_dir is safe: the gate would run it without a prompt.
	d := r.Run(context.Background(), "s", api.ToolCall{ID: "c1", Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)})
	if d.OK || d.Decision != audit.Denied || d.Result != "" || !strings.Contains(d.Error, "head anchor") {
		t.Fatalf("decision %+v", d)
	}
}
