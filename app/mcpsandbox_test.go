package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// sandbox, not the server).
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
}

// TestMCPServerUnsandboxedOnlyAfterConfirmation: an approved server in
// the sandbox whose entry is changed to "sandbox": false does not start:
// it waits for approval, and the approval says in plain words that it
// would run without the sandbox, as `jarvis mcp approve` prints it.
// Approving it is the one-time confirmation: the server then runs
// unconfined (a write outside its folder succeeds) and the log says it
// runs unsandboxed. Changing the entry again asks again.
func TestMCPServerUnsandboxedOnlyAfterConfirmation(t *testing.T) {
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
		t.Skip("no Landlock here: every server runs unconfined, and the panel says so")
	}
	own, outside, data := t.TempDir(), t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	entry := func(extra string) []byte {
		return []byte(`{"mcpServers":{"fs":{"command":` + quote(bin) + `,"args":[` + quote(own) + `,` + quote(outside) + `],"cwd":` + quote(own) + extra + `}}}`)
	}
	boxed := entry("")
	os.WriteFile(cfgPath, boxed, 0o600)
	store, err := approved.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Approve(mcp.ApprovedName, boxed); err != nil {
		t.Fatal(err)
	}
	var logs syncWriter
	m, err := mcp.New(mcp.Options{ConfigPath: cfgPath, InitTimeout: 20 * time.Second, Approved: store, Backoff: time.Hour,
		Confine: MCPSandbox(helper, nil), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	status := func() mcp.ServerStatus {
		ss, _ := m.Servers()
		for _, s := range ss {
			if s.Name == "fs" {
				return s
			}
		}
		return mcp.ServerStatus{}
	}
	testwait.Until(t, "the sandboxed server's tools", 30*time.Second, func() bool { return status().State == mcp.StateReady })
	write := func(p string) error {
		_, err := m.Call(context.Background(), "c", "mcp__fs__write_file", json.RawMessage(`{"path":`+quote(p)+`,"content":"x"}`), nil)
		return err
	}
	if err := write(filepath.Join(outside, "boxed.txt")); err == nil {
		t.Fatal("the sandboxed server wrote outside its folder")
	}

	// The entry now asks to run outside the sandbox: it waits.
	unboxed := entry(`,"sandbox":false`)
	os.WriteFile(cfgPath, unboxed, 0o600)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the unsandboxed entry waiting for approval", 10*time.Second, func() bool { return status().State == mcp.StateApproval })
	a := status().Approval
	if a == nil || !a.Unsandboxed || !strings.Contains(a.Sandbox, "WITHOUT the sandbox") {
		t.Fatalf("the approval does not say it runs without the sandbox: %+v", a)
	}
	if _, err := os.Stat(filepath.Join(outside, "free.txt")); err == nil {
		t.Fatal("written before any approval")
	}
	// jarvis mcp approve prints the same words.
	var out strings.Builder
	printApproval(&out, status())
	if !strings.Contains(out.String(), a.Sandbox) {
		t.Errorf("jarvis mcp approve shows:\n%s\nwithout %q", out.String(), a.Sandbox)
	}

	// The confirmation: approved as shown, it runs unconfined.
	if err := m.ApproveConfig(a.Hash); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the approved unsandboxed server", 30*time.Second, func() bool { return status().State == mcp.StateReady })
	if err := write(filepath.Join(outside, "free.txt")); err != nil {
		t.Fatalf("the server approved to run without the sandbox could not write outside its folder: %v", err)
	}
	if !strings.Contains(logs.String(), "without the sandbox") {
		t.Errorf("the log does not say the server runs without the sandbox:\n%s", logs.String())
	}

	// Any change to the entry asks again.
	os.WriteFile(cfgPath, entry(`,"sandbox":false,"network":true`), 0o600)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the changed entry waiting for approval again", 10*time.Second, func() bool { return status().State == mcp.StateApproval })
}

// syncWriter is a log sink the server goroutines and the test share.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
