package security

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/internal/instance"
	"jarvis/internal/testpeer"
)

// TestUndoIsHandedToTheRunningHeadless: `jarvis undo` run beside a running
// `jarvis --headless` on the same data dir hands its request to it over the
// owner-only control socket, and prints its answer with the command's exit
// statuses (3 and nothing changed on a conflict); the headless process does
// the undo and says so in its log.
func TestUndoIsHandedToTheRunningHeadless(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	g := startHeadless(t, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"toolResultTimeoutSeconds":60}`, up.URL+"/v1"),
		`{"rules":[{"tool":"write_file","action":"allow"}]}`,
		func(ws string) { os.WriteFile(filepath.Join(ws, "a.txt"), []byte("before"), 0o640) })
	g.turn(t, "general", `[[tool write_file {"path":"a.txt","content":"after"}]]`)
	a := filepath.Join(g.workspace, "a.txt")
	if b, _ := os.ReadFile(a); string(b) != "after" {
		t.Fatalf("a.txt = %q; gate log: %s", b, g.log())
	}
	fi, err := os.Stat(filepath.Join(g.dataDir, instance.SocketFile))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket %v %v: want a socket, mode 0600", fi, err)
	}
	desk, err := desktopBinary()
	if err != nil {
		t.Fatal(err)
	}
	undo := func(args ...string) (int, string, string) {
		cmd := exec.Command(desk, append(append([]string{"undo"}, args...), "--data-dir", g.dataDir, "--workspace", g.workspace)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	code, out, errOut := undo("list")
	if code != 0 || !strings.Contains(out, "1 file(s): a.txt") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	turn := strings.Fields(out)[0]

	os.WriteFile(a, []byte("the user's"), 0o640)
	code, _, errOut = undo("turn", turn)
	if b, _ := os.ReadFile(a); code != 3 || string(b) != "the user's" || !strings.Contains(errOut, "a.txt: changed since the turn") {
		t.Fatalf("conflict: exit %d, a.txt %q, %q", code, b, errOut)
	}
	os.WriteFile(a, []byte("after"), 0o640)
	code, out, errOut = undo("turn", turn)
	if b, _ := os.ReadFile(a); code != 0 || string(b) != "before" {
		t.Fatalf("undo: exit %d, a.txt %q, %q %q", code, b, out, errOut)
	}
	log := g.log()
	if !strings.Contains(log, "jarvis undo handed over to this process") || strings.Count(log, "jarvis undo handed over") != 3 {
		t.Fatalf("the headless process did not answer the three commands: %s", log)
	}
	es := g.stop(t)
	var undos int
	for _, e := range es {
		if e.Tool == "undo" {
			undos++
		}
	}
	if undos != 2 {
		t.Fatalf("%d undo rows in the audit log, want the refused one and the undo", undos)
	}
	if _, err := os.Stat(filepath.Join(g.dataDir, instance.SocketFile)); !os.IsNotExist(err) {
		t.Fatalf("the control socket outlived the process: %v", err)
	}
}
