package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/internal/instance"
)

// TestHelperUndoCommand is `jarvis undo` as a process of its own: it runs
// UndoCommand with the arguments in JARVIS_UNDO_HELPER_ARGS and exits with
// its status.
func TestHelperUndoCommand(t *testing.T) {
	raw := os.Getenv("JARVIS_UNDO_HELPER_ARGS")
	if raw == "" {
		t.Skip("helper process for the undo handover tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	os.Exit(UndoCommand(args, UndoCommandOptions{Stdout: os.Stdout, Stderr: os.Stderr,
		DefaultDataDir: func() (string, error) { return "", errors.New("not used") },
		Notify: func(string, []string) error {
			os.Stderr.WriteString("told the window over D-Bus\n")
			return nil
		}}))
}

// undoProcess runs `jarvis undo ARGS` on dataDir and ws in another process.
func undoProcess(t *testing.T, dataDir, ws string, args ...string) (int, string, string) {
	t.Helper()
	raw, _ := json.Marshal(append(args, "--data-dir", dataDir, "--workspace", ws))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUndoCommand$")
	cmd.Env = append(os.Environ(), "JARVIS_UNDO_HELPER_ARGS="+string(raw))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// undoRunner is a headless runner on dir's data and the workspace ws in
// which each write ({turn id, write_file arguments}) has run through the
// checkpointed exec the gate uses, in a turn of its own.
func undoRunner(t *testing.T, dir, ws string, writes ...[2]string) *Runner {
	t.Helper()
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"),
		PolicyPath: filepath.Join(dir, "policy.json"), Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for i, w := range writes {
		call := api.ToolCall{ID: "call-" + w[0], TurnID: w[0]}
		if _, err := r.checkpointed("s", call)(context.Background(), "write_file", json.RawMessage(w[1])); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	return r
}

// TestUndoIsHandedToTheRunningInstance: with a process holding the data
// dir's lock and answering on its control socket (ServeUndo, as the window
// and `jarvis --headless` do), `jarvis undo` run as another process hands
// list and turn to it and prints its answer with the same exit statuses: a
// conflict exits 3 and changes nothing; the undo is done, and audited, by
// the running process, whose window is told through changed. A command for
// another workspace is done by the command itself.
func TestUndoIsHandedToTheRunningInstance(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a before"), 0o640)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b before"), 0o644)
	r := undoRunner(t, dir, ws, [2]string{"t1", `{"path":"a.txt","content":"a after"}`}, [2]string{"t2", `{"path":"b.txt","content":"b after"}`})
	lock, err := instance.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	var mu sync.Mutex
	var changed []string
	srv, err := ServeUndo(dir, r, func(event string, data any) {
		mu.Lock()
		defer mu.Unlock()
		if event != "undo:changed" {
			t.Errorf("the window got %q, want undo:changed", event)
		}
		changed = append(changed, data.(map[string]string)["turnId"])
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	told := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), changed...) }

	code, out, errOut := undoProcess(t, dir, ws, "list")
	if code != 0 || !strings.Contains(out, "t1\t") || !strings.Contains(out, "t2\t") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	// The answer printed is the running process's own.
	var ans undoAnswer
	if err := instance.Call(context.Background(), dir, undoOp, undoRequest{Sub: "list", Workspace: r.cps.Workspace()}, &ans); err != nil || ans.Code != 0 || ans.Stdout != out {
		t.Fatalf("the instance's list %+v %v, the command printed %q", ans, err, out)
	}

	// A conflict: exit 3 through the handover, nothing changed, nobody told.
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("the user's"), 0o644)
	code, out, errOut = undoProcess(t, dir, ws, "turn", "t2")
	if code != UndoExitConflict || !strings.Contains(errOut, "b.txt: changed since the turn") {
		t.Fatalf("conflict: %d %q %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "the user's" {
		t.Fatalf("a refused undo changed b.txt: %q", b)
	}
	if c := told(); len(c) != 0 {
		t.Fatalf("the window was told of a refused undo: %v", c)
	}

	code, out, errOut = undoProcess(t, dir, ws, "turn", "t1")
	if code != 0 || !strings.Contains(out, "restored 1 file(s) of turn t1: a.txt") || strings.Contains(errOut, "D-Bus") {
		t.Fatalf("undo: %d %q %q", code, out, errOut)
	}
	fi, _ := os.Stat(filepath.Join(ws, "a.txt"))
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a before" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("a.txt after the handed-over undo: %q %v", b, fi.Mode())
	}
	if c := told(); len(c) != 1 || c[0] != "t1" {
		t.Fatalf("the running process did not do the undo (told %v)", c)
	}
	code, _, errOut = undoProcess(t, dir, ws, "turn", "t2", "--force")
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); code != 0 || string(b) != "b before" {
		t.Fatalf("--force: %d %q, b.txt %q", code, errOut, b)
	}
	es, err := r.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 3 || es[0].Decision != "held" || es[1].Decision != audit.Allowed || es[2].Decision != audit.Allowed {
		t.Fatalf("audit rows %+v %v: want the refused undo and the two undos", es, err)
	}

	// Another workspace: the running process is not asked, the command does it.
	other := t.TempDir()
	code, out, errOut = undoProcess(t, dir, other, "turn", "t1")
	if code != UndoExitError || !strings.Contains(errOut, "the turn changed no files") {
		t.Fatalf("other workspace: %d %q %q", code, out, errOut)
	}
	if c := told(); len(c) != 2 {
		t.Fatalf("the running process answered for another workspace (told %v)", c)
	}
}
