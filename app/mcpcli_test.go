package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/app/mcp"
	"jarvis/internal/approved"
	"jarvis/internal/instance"
	"jarvis/internal/testwait"
)

// mcpCmd runs `jarvis mcp ARGS` on data and cfg with stdin.
func mcpCmd(t *testing.T, data, cfg, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := MCPCommand(append(args, "--data-dir", data, "--mcp-config", cfg), MCPCommandOptions{
		DefaultDataDir: func() (string, error) { return data, nil }, DefaultMCPConfig: func() (string, error) { return cfg, nil },
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
	})
	return code, out.String(), errOut.String()
}

// TestMCPCommandApprovesWhatItShows: with no Jarvis running, `jarvis mcp
// list` shows an entry written outside Jarvis waiting, with the command it
// would run; `approve` prints it, asks, and a "no" approves nothing; a
// "yes" approves that file. With a headless Jarvis running on the data dir,
// the approval is handed to it and its server leaves the waiting state.
func TestMCPCommandApprovesWhatItShows(t *testing.T) {
	dir := t.TempDir()
	data, cfg := filepath.Join(dir, "data"), filepath.Join(dir, "mcp.json")
	os.MkdirAll(data, 0o700)
	mark := filepath.Join(dir, "ran")
	entry := `{"mcpServers":{"x":{"command":"/bin/sh","args":["-c","touch ` + mark + `"]}}}`
	os.WriteFile(cfg, []byte(entry), 0o600)

	code, out, _ := mcpCmd(t, data, cfg, "", "list")
	if code != 0 || !strings.Contains(out, "x (new) runs: /bin/sh -c 'touch "+mark+"'") || !strings.Contains(out, "jarvis mcp approve x") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if code, out, _ := mcpCmd(t, data, cfg, "n\n", "approve", "x"); code != 1 || !strings.Contains(out, "nothing approved") {
		t.Fatalf("a no: %d\n%s", code, out)
	}
	store, _ := approved.Open(data)
	if ok, _ := store.Check(mcp.ApprovedName, []byte(entry)); ok {
		t.Fatal("a no approved the file")
	}
	if code, out, e := mcpCmd(t, data, cfg, "y\n", "approve"); code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("a yes: %d\n%s%s", code, out, e)
	}
	if ok, _ := store.Check(mcp.ApprovedName, []byte(entry)); !ok {
		t.Fatal("the file shown was not approved")
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the command started a server")
	}

	// A running headless Jarvis: the file changes again, the approval goes to it.
	entry2 := strings.Replace(entry, `"x"`, `"y"`, 1)
	os.WriteFile(cfg, []byte(entry2), 0o600)
	lock, err := instance.Acquire(data)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	m, err := mcp.New(mcp.Options{ConfigPath: cfg, StatePath: filepath.Join(data, "mcp-state.json"), Approved: store, Backoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start()
	os.Mkdir(filepath.Join(dir, "ws"), 0o700)
	r := undoRunner(t, dir, filepath.Join(dir, "ws"))
	srv, err := ServeUndo(data, r, nil, m)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if code, out, e := mcpCmd(t, data, cfg, "", "approve", "y", "--yes"); code != 0 || !strings.Contains(out, "y (new) runs: /bin/sh") {
		t.Fatalf("approve through the running Jarvis: %d\n%s%s", code, out, e)
	}
	testwait.Until(t, "the approved server started by the running Jarvis", 10*time.Second, func() bool { _, err := os.Stat(mark); return err == nil })
}
