package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/app/mcp"
	"jarvis/internal/approved"
	"jarvis/internal/testwait"
	"jarvis/tools"
)

// TestMCPServerSandboxed: the filesystem reference server (a real npm
// package over stdio), given its own folder and another as its roots,
// writes in its folder in both cases; outside it, its write succeeds when
// it runs unconfined and fails inside the sandbox (so the test proves the
// sandbox, not the server). A server asking for "sandbox": false is not
// started, and says why.
func TestMCPServerSandboxed(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join("mcp", "testdata", "node_modules", ".bin", "mcp-server-filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the filesystem server is not installed: run scripts/setup.sh (npm ci in app/mcp/testdata): %v", err)
	}
	t.Setenv("CONFINE_HELPER", "1")
	helper := []string{os.Args[0], "-test.run=^TestHelperConfineACP$", "--"}
	if !(tools.Sandbox{Helper: helper}).Protections()[0].Held {
		t.Skip("no Landlock here: the server would run unconfined, and the panel says so")
	}
	for _, confined := range []bool{false, true} {
		own, outside := t.TempDir(), t.TempDir()
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"fs": map[string]any{"command": bin, "args": []string{own, outside}, "cwd": own},
		}})
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o600)
		// The file as the user approved it (app/mcp/approval.go).
		store, err := approved.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Approve(mcp.ApprovedName, cfg); err != nil {
			t.Fatal(err)
		}
		opts := mcp.Options{ConfigPath: filepath.Join(dir, "mcp.json"), InitTimeout: 20 * time.Second, Approved: store}
		if confined {
			opts.Confine = MCPSandbox(helper, nil)
		}
		m, err := mcp.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "the filesystem server's tools", 30*time.Second, func() bool {
			_, ok := m.Definition("mcp__fs__write_file")
			return ok
		})
		write := func(p string) error {
			_, err := m.Call(context.Background(), "c", "mcp__fs__write_file", json.RawMessage(`{"path":`+quote(p)+`,"content":"x"}`), nil)
			return err
		}
		if err := write(filepath.Join(own, "in.txt")); err != nil {
			t.Errorf("confined=%v: a write in its own folder: %v", confined, err)
		}
		err = write(filepath.Join(outside, "out.txt"))
		_, statErr := os.Stat(filepath.Join(outside, "out.txt"))
		if wrote := err == nil && statErr == nil; wrote == confined {
			t.Errorf("confined=%v: a write outside its folder: err %v, file there: %v", confined, err, statErr == nil)
		}
		m.Close()
	}

	// "sandbox": false: not started, in plain words.
	dir := t.TempDir()
	unboxed := []byte(`{"mcpServers":{"fs":{"command":"` + bin + `","args":["` + dir + `"],"sandbox":false}}}`)
	os.WriteFile(filepath.Join(dir, "mcp.json"), unboxed, 0o600)
	store, err := approved.Open(t.TempDir()) // approved: the sandbox, not the approval, refuses it
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Approve(mcp.ApprovedName, unboxed); err != nil {
		t.Fatal(err)
	}
	m, err := mcp.New(mcp.Options{ConfigPath: filepath.Join(dir, "mcp.json"), Confine: MCPSandbox(helper, nil), Backoff: time.Hour, Approved: store})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start()
	testwait.Until(t, "the unsandboxed server's failure", 10*time.Second, func() bool {
		ss, _ := m.Servers()
		for _, s := range ss {
			if s.Name == "fs" && strings.Contains(s.Error, "outside the sandbox") {
				return true
			}
		}
		return false
	})
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
