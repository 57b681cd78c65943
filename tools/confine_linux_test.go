//go:build linux

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelperConfine is the confinement helper when the test binary is
// started as one (CONFINE_HELPER=1): it runs ConfineMain on the arguments
// after "--", as the jarvis binary's hidden subcommand does.
func TestHelperConfine(t *testing.T) {
	if os.Getenv("CONFINE_HELPER") != "1" {
		t.Skip("helper process for TestRunCommandConfined")
	}
	err := ConfineMain(flag.Args())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(111)
}

// TestRunCommandConfined: a command started by run_command writes inside
// the workspace and its own TMPDIR, and cannot write outside, through a
// path or a symlink in the workspace; the prompt's note says so.
func TestRunCommandConfined(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("this kernel has no Landlock (landlock_create_ruleset reports no ABI): run_command runs unconfined here, and the prompt says so")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CONFINE_HELPER=1")
	x := newExec(t, ws, nil, func(o *Options) {
		o.CommandAllowlist = []string{sh}
		o.LookPath = exec.LookPath
		o.Env = env
		o.ConfineHelper = []string{os.Args[0], "-test.run=^TestHelperConfine$", "--"}
	})
	a := x.Assess("run_command", json.RawMessage(`{"program":"`+sh+`","args":["-c","true"]}`))
	if !strings.Contains(a.Reason, "commands cannot be undone") || !strings.Contains(a.Reason, "confined by Landlock") {
		t.Fatalf("prompt note %q", a.Reason)
	}
	run := func(script string) CommandResult {
		t.Helper()
		out, err := x.Execute(context.Background(), "run_command", jsonArgs(t, map[string]any{"program": sh, "args": []string{"-c", script}}))
		if err != nil {
			t.Fatal(err)
		}
		var r CommandResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(`echo in > inside.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && echo x > /dev/null`); r.ExitCode != 0 || r.Stdout != "tmp\n" {
		t.Fatalf("writing inside: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "inside.txt")); string(b) != "in\n" {
		t.Fatalf("inside.txt = %q", b)
	}
	for _, target := range []string{filepath.Join(outside, "direct.txt"), "out/via-link.txt", filepath.Join(os.TempDir(), "jarvis-confine-escape.txt")} {
		r := run(`echo escaped > '` + target + `'`)
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Permission denied") {
			t.Errorf("writing %s: %+v", target, r)
		}
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 {
		t.Fatalf("a confined command wrote outside the workspace: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "jarvis-confine-escape.txt")); !errors.Is(err, os.ErrNotExist) {
		os.Remove(filepath.Join(os.TempDir(), "jarvis-confine-escape.txt"))
		t.Fatal("a confined command wrote to the shared temporary folder")
	}
	// Reading outside is allowed.
	os.WriteFile(filepath.Join(outside, "r.txt"), []byte("readable"), 0o644)
	if r := run(`cat '` + filepath.Join(outside, "r.txt") + `'`); r.Stdout != "readable" {
		t.Fatalf("reading outside: %+v", r)
	}
}

// TestRunCommandNotConfinedSaysSo: without a helper the prompt says the
// command is not confined.
func TestRunCommandNotConfinedSaysSo(t *testing.T) {
	x := newExec(t, t.TempDir(), nil, func(o *Options) { o.CommandAllowlist = []string{"git"} })
	a := x.Assess("run_command", json.RawMessage(`{"program":"git","args":["status"]}`))
	if !strings.Contains(a.Reason, "commands cannot be undone; not confined") {
		t.Fatalf("note %q", a.Reason)
	}
}
