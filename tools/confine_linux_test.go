//go:build linux

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/internal/testwait"
)

// TestHelperConfine is the confinement helper when the test binary is
// started as one (CONFINE_HELPER=1): it runs ConfineMain on the arguments
// after "--", as the jarvis binary's hidden subcommand does.
func TestHelperConfine(t *testing.T) {
	if os.Getenv("CONFINE_HELPER") != "1" {
		t.Skip("helper process for the sandbox tests")
	}
	err := ConfineMain(flag.Args())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(111)
}

// TestHelperEscape is the program the escape tests run (ESCAPE_HELPER=1):
// it tries one escape, flag.Args() = ACTION TARGET, and exits 0 when it
// succeeded, 1 (saying why) when the system refused it.
func TestHelperEscape(t *testing.T) {
	if os.Getenv("ESCAPE_HELPER") != "1" {
		t.Skip("helper process for the sandbox tests")
	}
	a := flag.Args()
	err := escape(a[0], a[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func escape(action, target string) error {
	switch action {
	case "write":
		return os.WriteFile(target, []byte("escaped"), 0o644)
	case "read":
		_, err := os.ReadFile(target)
		return err
	case "rename":
		return os.Rename(target, target+".moved")
	case "tcp", "unix":
		c, err := net.DialTimeout(action, target, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		// The listener answers one byte: the connection really reached it.
		if _, err := c.Write([]byte("x")); err != nil {
			return err
		}
		b := make([]byte, 1)
		_, err = c.Read(b)
		return err
	case "kill0":
		pid, _ := strconv.Atoi(target)
		return syscall.Kill(pid, 0)
	}
	return fmt.Errorf("unknown action %q", action)
}

// answer accepts connections on l and answers each with one byte.
func answer(t *testing.T, l net.Listener) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 1)
			c.Read(b)
			c.Write([]byte("y"))
			c.Close()
		}
	}()
}

// sandboxKind is how the escape tests configure an executor.
type sandboxKind int

const (
	unconfined   sandboxKind = iota // no helper, no bubblewrap
	landlockOnly                    // the helper (Landlock, seccomp), no bubblewrap
	full                            // the helper and bubblewrap
)

func (k sandboxKind) String() string {
	return [...]string{"unconfined", "landlock+seccomp", "bubblewrap+landlock+seccomp"}[k]
}

func sandboxExec(t *testing.T, ws string, protected []string, k sandboxKind) *Executor {
	env := append(os.Environ(), "CONFINE_HELPER=1", "ESCAPE_HELPER=1")
	return newExec(t, ws, nil, func(o *Options) {
		o.LookPath = exec.LookPath
		o.Env = env
		o.Protected = protected
		o.NoBubblewrap = k != full
		if k != unconfined {
			o.ConfineHelper = []string{os.Args[0], "-test.run=^TestHelperConfine$", "--"}
		}
	})
}

func runCmd(t *testing.T, x *Executor, args map[string]any) CommandResult {
	t.Helper()
	out, err := x.Execute(context.Background(), "run_command", jsonArgs(t, args))
	if err != nil {
		t.Fatal(err)
	}
	var r CommandResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSandboxEscapes: each escape succeeds when the program runs
// unconfined and fails inside the sandbox (so the test proves the
// sandbox, not the environment): a write into a protected folder inside
// the workspace, reading it, moving its parent away, a write outside the
// workspace directly and through a symlink, a loopback TCP connect, a
// pathname and an abstract Unix socket connect, kill -0 of a process
// outside. Without bubblewrap (Landlock and seccomp alone) the escapes
// only bubblewrap stops still succeed, and the sandbox says that
// protection is not held.
func TestSandboxEscapes(t *testing.T) {
	if landlockABI() < 6 || !seccompAvailable() {
		t.Skip("this kernel lacks Landlock ABI 6 or seccomp: the sandbox is partial here, and the prompt says which protection is missing")
	}
	if _, err := Bubblewrap(); err != nil {
		t.Skipf("bubblewrap: %v (scripts/setup.sh installs it)", err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answer(t, tcp)
	sockDir := t.TempDir()
	usock, err := net.Listen("unix", filepath.Join(sockDir, "service.sock")) // a session bus, ssh-agent, docker.sock
	if err != nil {
		t.Fatal(err)
	}
	answer(t, usock)
	abstract := fmt.Sprintf("@jarvis-escape-%d", os.Getpid())
	asock, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	answer(t, asock)

	for _, k := range []sandboxKind{unconfined, landlockOnly, full} {
		t.Run(k.String(), func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			prot := filepath.Join(ws, ".local", "share", "jarvis")
			mkfile(t, filepath.Join(prot, "policy.json"), `{"rules":[]}`)
			if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
				t.Fatal(err)
			}
			x := sandboxExec(t, ws, []string{prot}, k)
			escapes := []struct {
				name, action, target string
				onlyBwrap            bool // Landlock and seccomp alone do not stop it
			}{
				{"write into a protected folder inside the workspace", "write", filepath.Join(prot, "policy.json"), true},
				{"read a protected folder", "read", filepath.Join(prot, "policy.json"), true},
				{"move a protected folder's parent away", "rename", filepath.Join(ws, ".local", "share"), true},
				{"write outside the workspace", "write", filepath.Join(outside, "direct.txt"), false},
				{"write through a symlink", "write", filepath.Join(ws, "out", "link.txt"), false},
				{"loopback TCP connect", "tcp", tcp.Addr().String(), false},
				{"pathname Unix socket connect", "unix", usock.Addr().String(), false},
				{"abstract Unix socket connect", "unix", abstract, false},
				{"kill -0 a process outside", "kill0", strconv.Itoa(os.Getpid()), false},
			}
			for _, e := range escapes {
				r := runCmd(t, x, map[string]any{"program": os.Args[0], "args": []string{"-test.run=^TestHelperEscape$", "--", e.action, e.target}})
				escaped := r.ExitCode == 0
				want := k == unconfined || (k == landlockOnly && e.onlyBwrap)
				if escaped != want {
					t.Errorf("%s: escaped=%v, want %v (%s; %+v)", e.name, escaped, want, x.Sandbox(nil, false).Describe(), r)
				}
				if e.action == "rename" && escaped {
					os.Rename(e.target+".moved", e.target)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(prot, "policy.json")); k == full && string(b) != `{"rules":[]}` {
				t.Errorf("the protected file changed: %q", b)
			}
			// What the prompt says matches what held.
			d := x.Sandbox(nil, false).Describe()
			switch k {
			case unconfined:
				if !strings.HasPrefix(d, "not sandboxed") {
					t.Errorf("describe %q", d)
				}
			case landlockOnly:
				if !strings.Contains(d, "NOT held: Jarvis's own folders out of reach") {
					t.Errorf("describe %q, want the missing protection named", d)
				}
			case full:
				if strings.Contains(d, "NOT held") || !strings.Contains(d, "no network") || !x.Sandbox(nil, false).Confined() {
					t.Errorf("describe %q", d)
				}
			}
		})
	}
}

// TestSandboxNetworkAllowed: a command the call allowed the network
// reaches a loopback listener from inside the sandbox, and still no Unix
// socket; the result says it had the network.
func TestSandboxNetworkAllowed(t *testing.T) {
	if landlockABI() < 4 || !seccompAvailable() {
		t.Skip("this kernel lacks Landlock ABI 4 or seccomp")
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answer(t, tcp)
	usock, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	answer(t, usock)
	kinds := []sandboxKind{landlockOnly}
	if _, err := Bubblewrap(); err == nil {
		kinds = append(kinds, full)
	}
	for _, k := range kinds {
		x := sandboxExec(t, t.TempDir(), nil, k)
		a := x.Assess("run_command", jsonArgs(t, map[string]any{"program": "curl", "network": true}))
		if !strings.Contains(a.Reason, "network allowed") || !strings.Contains(string(a.Canonical), `"network":true`) {
			t.Fatalf("%s: assessment %+v", k, a)
		}
		r := runCmd(t, x, map[string]any{"program": os.Args[0], "network": true, "args": []string{"-test.run=^TestHelperEscape$", "--", "tcp", tcp.Addr().String()}})
		if r.ExitCode != 0 || !r.Network || !strings.Contains(r.Sandbox, "network allowed") {
			t.Errorf("%s: network allowed, loopback connect: %+v", k, r)
		}
		r = runCmd(t, x, map[string]any{"program": os.Args[0], "network": true, "args": []string{"-test.run=^TestHelperEscape$", "--", "unix", usock.Addr().String()}})
		if r.ExitCode == 0 {
			t.Errorf("%s: network allowed, a Unix socket was reached: %+v", k, r)
		}
	}
}

// TestSandboxWritesInside: inside the sandbox a command writes in the
// workspace, its own TMPDIR and /dev/null, and reads outside.
func TestSandboxWritesInside(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("no Landlock here")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	kinds := []sandboxKind{landlockOnly}
	if _, err := Bubblewrap(); err == nil {
		kinds = append(kinds, full)
	}
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "r.txt"), "readable")
	for _, k := range kinds {
		ws := t.TempDir()
		x := sandboxExec(t, ws, nil, k)
		r := runCmd(t, x, map[string]any{"program": sh, "args": []string{"-c", `echo in > inside.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && echo x > /dev/null && cat '` + filepath.Join(outside, "r.txt") + `'`}})
		if r.ExitCode != 0 || r.Stdout != "tmp\nreadable" {
			t.Fatalf("%s: writing inside: %+v", k, r)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "inside.txt")); string(b) != "in\n" {
			t.Fatalf("%s: inside.txt = %q", k, b)
		}
	}
}

// TestRunCommandNotConfinedSaysSo: without a helper or bubblewrap the
// prompt says the command is not sandboxed.
func TestRunCommandNotConfinedSaysSo(t *testing.T) {
	x := newExec(t, t.TempDir(), nil, nil)
	a := x.Assess("run_command", json.RawMessage(`{"program":"git","args":["status"]}`))
	if !strings.Contains(a.Reason, "commands cannot be undone; not sandboxed") || a.Sandbox == "" {
		t.Fatalf("note %q", a.Reason)
	}
}

// sleepers lists the pids of processes running "sleep N".
func sleepers(n string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if string(b) == "sleep\x00"+n+"\x00" {
			out = append(out, pid)
		}
	}
	return out
}

// TestStopKillsTheTree: stopping a command (the call's context ends: the
// user's Stop, the turn's end) ends it and the child it forked that
// ignores SIGTERM and SIGINT, sandboxed or not; a timeout does the same
// and the result says it timed out.
func TestStopKillsTheTree(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	kinds := []sandboxKind{unconfined}
	if landlockABI() > 0 {
		kinds = append(kinds, landlockOnly)
	}
	if _, err := Bubblewrap(); err == nil && landlockABI() > 0 {
		kinds = append(kinds, full)
	}
	for i, k := range kinds {
		n := strconv.Itoa(900000 + os.Getpid()%1000*10 + i)
		x := sandboxExec(t, t.TempDir(), nil, k)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := x.Execute(ctx, "run_command", jsonArgs(t, map[string]any{"program": sh,
				"args": []string{"-c", `(trap "" TERM INT; exec sleep ` + n + `) & wait`}}))
			done <- err
		}()
		testwait.Until(t, k.String()+": the child sleep "+n+" running", 10*time.Second, func() bool { return len(sleepers(n)) > 0 })
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: stopped command: err %v", k, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the stopped command did not return", k)
		}
		testwait.Until(t, k.String()+": the child ignoring SIGTERM gone", 10*time.Second, func() bool { return len(sleepers(n)) == 0 })
	}
	// The timeout stops it the same way, and says so.
	n := strconv.Itoa(910000 + os.Getpid()%1000)
	x := newExec(t, t.TempDir(), nil, func(o *Options) { o.LookPath = exec.LookPath; o.Timeout = 300 * time.Millisecond })
	r := runCmd(t, x, map[string]any{"program": sh, "args": []string{"-c", `echo started; (trap "" TERM INT; exec sleep ` + n + `) & wait`}})
	if !strings.HasPrefix(r.Stopped, "timed out") || r.Stdout != "started\n" {
		t.Fatalf("timed out command: %+v", r)
	}
	testwait.Until(t, "the timed-out command's child gone", 10*time.Second, func() bool { return len(sleepers(n)) == 0 })
}

// TestRunCommandStreamsOutput: the output reaches the call's progress
// function while the program still runs.
func TestRunCommandStreamsOutput(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	x := newExec(t, dir, nil, func(o *Options) { o.LookPath = exec.LookPath })
	got := make(chan string, 16)
	ctx := WithProgress(context.Background(), func(s string) { got <- s })
	done := make(chan string, 1)
	go func() {
		out, _ := x.Execute(ctx, "run_command", jsonArgs(t, map[string]any{"program": sh,
			"args": []string{"-c", `echo first; while [ ! -f go ]; do sleep 0.05; done; echo second`}}))
		done <- out
	}()
	select {
	case s := <-got:
		if s != "first\n" {
			t.Fatalf("first chunk %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no output while the program ran")
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644) // only now may it end
	var r CommandResult
	json.Unmarshal([]byte(<-done), &r)
	if r.Stdout != "first\nsecond\n" || r.DurationMS <= 0 && r.ExitCode != 0 {
		t.Fatalf("result %+v", r)
	}
}

// TestSandboxWorkspaceInsideDataDir: the default workspace is
// <data-dir>/workspace, inside a protected folder: with bubblewrap the
// program still works in the workspace, and the rest of the data dir is
// out of its reach.
func TestSandboxWorkspaceInsideDataDir(t *testing.T) {
	if _, err := Bubblewrap(); err != nil || landlockABI() == 0 {
		t.Skip("needs bubblewrap and Landlock")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	data := t.TempDir()
	ws := filepath.Join(data, "workspace")
	mkfile(t, filepath.Join(data, "audit.db"), "rows")
	os.MkdirAll(ws, 0o700)
	x := sandboxExec(t, ws, []string{data}, full)
	r := runCmd(t, x, map[string]any{"program": sh, "args": []string{"-c", `echo in > f && cat f && cat ../audit.db`}})
	if r.Stdout != "in\n" || r.ExitCode == 0 {
		t.Fatalf("%+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f")); string(b) != "in\n" {
		t.Fatalf("the workspace file: %q", b)
	}
}

// TestSmallHelperNextToTheBinary: the small jarvis-confine next to the
// jarvis binary replaces `jarvis __confine`; without it the re-exec stays.
func TestSmallHelperNextToTheBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "jarvis")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := []string{exe, ConfineSubcommand}
	if got := SmallHelper(h); strings.Join(got, " ") != strings.Join(h, " ") {
		t.Fatalf("no jarvis-confine: helper %q, want %q", got, h)
	}
	small := filepath.Join(dir, HelperName)
	if err := os.WriteFile(small, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := SmallHelper(h); len(got) != 2 {
		t.Fatalf("jarvis-confine not executable: helper %q, want the re-exec", got)
	}
	if err := os.Chmod(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := SmallHelper(h); len(got) != 1 || got[0] != small {
		t.Fatalf("helper %q, want [%s]", got, small)
	}
}
