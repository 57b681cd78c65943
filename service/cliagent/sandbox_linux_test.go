//go:build linux

package cliagent

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/service/cliopts"
	"jarvis/tools"
)

// TestHelperConfineCLI is the confinement helper when the test binary is
// started as one (CONFINE_HELPER=1), as the jarvis binary's hidden
// subcommand is.
func TestHelperConfineCLI(t *testing.T) {
	if os.Getenv("CONFINE_HELPER") != "1" {
		t.Skip("helper process for the sandbox tests")
	}
	err := tools.ConfineMain(flag.Args())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(111)
}

// TestHelperEscapeCLI is what the scripted CLI runs to try one escape
// (ESCAPE_HELPER=1): flag.Args() = ACTION TARGET; exit 0 when it worked,
// 1 when the system refused it.
func TestHelperEscapeCLI(t *testing.T) {
	if os.Getenv("ESCAPE_HELPER") != "1" {
		t.Skip("helper process for the sandbox tests")
	}
	a := flag.Args()
	var err error
	switch a[0] {
	case "write":
		os.MkdirAll(filepath.Dir(a[1]), 0o700) // a state folder unconfined runs did not make
		err = os.WriteFile(a[1], []byte("escaped"), 0o644)
	case "replace": // a new file renamed over it, as an editor saves
		os.MkdirAll(filepath.Dir(a[1]), 0o700)
		if err = os.WriteFile(a[1]+".new", []byte("escaped"), 0o644); err == nil {
			err = os.Rename(a[1]+".new", a[1])
		}
	case "unix":
		var c net.Conn
		if c, err = net.DialTimeout("unix", a[1], 5*time.Second); err == nil {
			// The listener answers one byte: the connection reached it.
			c.Write([]byte("x"))
			_, err = c.Read(make([]byte, 1))
			c.Close()
		}
	default:
		err = fmt.Errorf("unknown action %q", a[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// The stream each scripted CLI prints around its escape attempts: a whole
// turn in its real format, answering "Done.".
var sandboxTurns = map[Kind][2]string{
	KindClaude: {`{"type":"system","subtype":"init","cwd":"/work","session_id":"sess-sb","tools":["Bash"],"model":"claude-sonnet-4-5","permissionMode":"bypassPermissions","apiKeySource":"none"}`,
		`{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Done."}]},"parent_tool_use_id":null,"session_id":"sess-sb","uuid":"u1"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"num_turns":1,"result":"Done.","session_id":"sess-sb","usage":{"input_tokens":1,"output_tokens":1}}`},
	KindPi: {`{"type":"session","version":3,"id":"5f1c2a8e-0000-4000-8000-444455556666","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}
{"type":"agent_start"}`,
		`{"type":"message_start","message":{"role":"assistant","content":[],"stopReason":"stop"}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Done."}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"usage":{"input":1,"output":1},"stopReason":"stop"}}
{"type":"agent_end","messages":[],"willRetry":false}`},
	KindCodex: {`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`},
}

// escapeRun is one run of a scripted CLI that tries each escape and
// records, in a file of its working folder, whether it worked.
type escapeRun struct {
	ws, outside, home, protected, sock string
}

// attempts are the escape attempts: name, action, target.
func (e escapeRun) attempts(kind Kind) [][3]string {
	return append([][3]string{
		{"workspace", "write", filepath.Join(e.ws, "written")},
		{"state", "write", filepath.Join(stateDir(e.home, kind), "state-written")},
		{"outside", "write", filepath.Join(e.outside, "escaped")},
		{"home", "write", filepath.Join(e.home, "escaped")},
		{"protected", "write", filepath.Join(e.protected, "policy.json")},
		{"unix", "unix", e.sock},
	}, e.settings(kind)...)
}

// stateDir is the state folder of kind in home.
func stateDir(home string, kind Kind) string {
	return filepath.Join(home, map[Kind]string{KindClaude: ".claude", KindPi: ".pi", KindCodex: ".codex"}[kind])
}

// settings are the attempts on what kind keeps read-only in its state
// folder (its settings replaced, code or servers added), named
// "settings…"; they need bubblewrap.
func (e escapeRun) settings(kind Kind) [][3]string {
	d := stateDir(e.home, kind)
	switch kind {
	case KindClaude:
		return [][3]string{{"settings", "replace", filepath.Join(d, "settings.json")}, {"settings-servers", "write", filepath.Join(e.home, ".claude.json")}}
	case KindPi:
		return [][3]string{{"settings", "replace", filepath.Join(d, "agent", "settings.json")}, {"settings-extension", "write", filepath.Join(d, "agent", "extensions", "x.ts")}}
	}
	return [][3]string{{"settings", "replace", filepath.Join(d, "config.toml")}, {"settings-rules", "write", filepath.Join(d, "rules", "x.rules")}}
}

// runEscapes runs the scripted CLI of kind once, in sb (nil: unconfined),
// and returns each attempt's exit status ("0" worked) and the answer.
func runEscapes(t *testing.T, kind Kind, mode string, sb *tools.Sandbox) (map[string]string, escapeRun, string) {
	t.Helper()
	e := escapeRun{outside: t.TempDir(), home: t.TempDir()}
	l, err := net.Listen("unix", filepath.Join(e.outside, "s"))
	if err != nil {
		t.Fatal(err)
	}
	e.sock = l.Addr().String()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Read(make([]byte, 1))
			c.Write([]byte("y"))
			c.Close()
		}
	}()
	var script strings.Builder
	script.WriteString(sandboxTurns[kind][0] + "\n")
	// The fake's folder is the CLI's working folder (the stub writes its
	// argv there); Jarvis's data folder is inside it.
	f := newFake(t, "")
	e.ws = f.dir
	e.protected = filepath.Join(e.ws, "jarvis-data")
	if err := os.Mkdir(e.protected, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, a := range e.attempts(kind) {
		fmt.Fprintf(&script, "@sh %s -test.run='^TestHelperEscapeCLI$' -- %s %s; echo $? > %s\n",
			shellQuote(os.Args[0]), a[1], shellQuote(a[2]), shellQuote(filepath.Join(e.ws, "result."+a[0])))
	}
	script.WriteString(sandboxTurns[kind][1])
	f = rewriteFake(t, f, script.String())
	if sb != nil {
		sb.Protected = []string{e.protected}
	}
	r := f.runner(kind, func(o *Options) {
		o.WorkDir = e.ws
		o.PermissionMode = mode
		o.Sandbox = sb
		o.Env = append(o.Env, "HOME="+e.home, "CONFINE_HELPER=1", "ESCAPE_HELPER=1")
	})
	res, _, err := run(t, r, Request{Prompt: "try"})
	if err != nil {
		t.Fatalf("%s: Run: %v (stderr %q)", kind, err, res.Stderr)
	}
	got := map[string]string{}
	for _, a := range e.attempts(kind) {
		b, err := os.ReadFile(filepath.Join(e.ws, "result."+a[0]))
		if err != nil {
			t.Fatalf("%s: the scripted CLI did not record the %s attempt: %v (stderr %q)", kind, a[0], err, res.Stderr)
		}
		got[a[0]] = strings.TrimSpace(string(b))
	}
	return got, e, res.Text
}

// rewriteFake gives f's folder the script of transcript (whose printed
// chunks stay in a folder of their own).
func rewriteFake(t *testing.T, f *fakeCLI, transcript string) *fakeCLI {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(newFake(t, transcript).dir, "script.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "script.sh"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCLIAgentsRunInJarvisSandbox: claude and pi (and codex in the full
// mode, where its own sandbox is off), scripted in their real stream
// formats, try to write outside their working folder, in the home folder,
// into Jarvis's data folder inside the working folder, to replace its own
// settings or add an extension, rule or MCP server to them (which would run
// outside the sandbox later), and to connect to a pathname Unix socket
// outside: run unconfined every attempt works (so the
// test proves the sandbox, not the environment); in Jarvis's sandbox each
// fails, while the CLI still answers and writes in its working folder and
// its own state folder.
func TestCLIAgentsRunInJarvisSandbox(t *testing.T) {
	bwrap, err := tools.Bubblewrap()
	if err != nil {
		t.Skipf("needs bubblewrap: %v", err)
	}
	helper := []string{os.Args[0], "-test.run=^TestHelperConfineCLI$", "--"}
	for _, c := range []struct {
		kind Kind
		mode string
	}{{KindClaude, cliopts.PermFull}, {KindPi, cliopts.PermFull}, {KindCodex, cliopts.PermFull}} {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			free, _, text := runEscapes(t, c.kind, c.mode, nil)
			for name, code := range free {
				if code != "0" {
					t.Errorf("unconfined: the %s attempt failed (exit %s): the environment, not the sandbox, stops it", name, code)
				}
			}
			if text != "Done." {
				t.Errorf("unconfined answer = %q", text)
			}
			got, e, text := runEscapes(t, c.kind, c.mode, &tools.Sandbox{Helper: helper, Bwrap: bwrap})
			for name, code := range got {
				want := name == "workspace" || name == "state"
				if (code == "0") != want {
					t.Errorf("sandboxed: the %s attempt exited %s; want it to %s", name, code, map[bool]string{true: "work", false: "fail"}[want])
				}
			}
			if text != "Done." {
				t.Errorf("sandboxed answer = %q", text)
			}
			for _, p := range []string{filepath.Join(e.outside, "escaped"), filepath.Join(e.home, "escaped"), filepath.Join(e.protected, "policy.json")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("sandboxed: %s exists (%v)", p, err)
				}
			}
			// The settings Jarvis made before the run are as it made them.
			if b, err := os.ReadFile(e.settings(c.kind)[0][2]); err != nil || strings.Contains(string(b), "escaped") {
				t.Errorf("sandboxed: the settings file holds %q (%v)", b, err)
			}
		})
	}
}

// TestCLIAgentSandboxWithoutBubblewrap: where bubblewrap is missing,
// Landlock and seccomp still keep the CLI's writes in its folders and
// refuse Unix sockets, and the agent's sandbox line names the protection
// that no longer holds.
func TestCLIAgentSandboxWithoutBubblewrap(t *testing.T) {
	helper := []string{os.Args[0], "-test.run=^TestHelperConfineCLI$", "--"}
	sb := &tools.Sandbox{Helper: helper}
	if !sb.Protections()[0].Held {
		t.Skip("needs Landlock")
	}
	got, _, text := runEscapes(t, KindClaude, cliopts.PermEdit, sb)
	for _, name := range []string{"outside", "home", "unix", "settings-servers"} {
		if got[name] == "0" {
			t.Errorf("Landlock and seccomp: the %s attempt worked", name)
		}
	}
	for _, name := range []string{"workspace", "state"} {
		if got[name] != "0" {
			t.Errorf("Landlock and seccomp: the %s attempt failed (exit %s)", name, got[name])
		}
	}
	if text != "Done." {
		t.Errorf("answer = %q", text)
	}
	r, err := New(Options{Kind: KindClaude, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Sandbox(); !strings.Contains(d, "network allowed") || !strings.Contains(d, "NOT held: Jarvis's own folders out of reach") ||
		!strings.Contains(d, "its own settings are writable") {
		t.Errorf("Sandbox() = %q: want it to say network allowed and name the missing protection", d)
	}
}

// TestCodexOwnSandboxIsLeftAlone: codex in read-only and edit runs its
// commands in its own sandbox, which does not nest in Jarvis's: it is
// started as it is, and its sandbox line says so; claude and pi always
// run in Jarvis's.
func TestCodexOwnSandboxIsLeftAlone(t *testing.T) {
	sb := &tools.Sandbox{Helper: []string{"/nonexistent-helper"}}
	for _, c := range []struct {
		kind     Kind
		mode     string
		confined bool
	}{
		{KindCodex, cliopts.PermReadOnly, false}, {KindCodex, cliopts.PermEdit, false}, {KindCodex, cliopts.PermFull, true},
		{KindClaude, cliopts.PermReadOnly, true}, {KindClaude, cliopts.PermFull, true}, {KindPi, cliopts.PermEdit, true},
	} {
		r, err := New(Options{Kind: c.kind, PermissionMode: c.mode, Sandbox: sb})
		if err != nil {
			t.Fatal(err)
		}
		if r.confined() != c.confined {
			t.Errorf("%s %s: confined = %v, want %v", c.kind, c.mode, r.confined(), c.confined)
		}
		own := strings.Contains(r.Sandbox(), "its own sandbox")
		if own == c.confined {
			t.Errorf("%s %s: Sandbox() = %q", c.kind, c.mode, r.Sandbox())
		}
	}
	// The helper does not exist: a wrapped codex could not start.
	f := newFake(t, sandboxTurns[KindCodex][0]+"\n"+sandboxTurns[KindCodex][1])
	if _, _, err := run(t, f.runner(KindCodex, func(o *Options) { o.Sandbox = sb }), Request{Prompt: "hi"}); err != nil {
		t.Errorf("codex read-only with its own sandbox: %v", err)
	}
}

// TestCLIAgentWorkDirInsideProtectedFolder: a CLI agent's default working
// folder is inside Jarvis's data folder (<data>/cli/<agent>), which the
// sandbox hides: the CLI works in its folder, and the rest of the data
// folder stays out of its reach.
func TestCLIAgentWorkDirInsideProtectedFolder(t *testing.T) {
	bwrap, err := tools.Bubblewrap()
	if err != nil {
		t.Skipf("needs bubblewrap: %v", err)
	}
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "policy.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(data, "cli", "coder")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString(sandboxTurns[KindPi][0] + "\n")
	for _, a := range [][3]string{{"workspace", "write", filepath.Join(ws, "written")}, {"protected", "write", filepath.Join(data, "policy.json")}} {
		fmt.Fprintf(&script, "@sh %s -test.run='^TestHelperEscapeCLI$' -- %s %s; echo $? > %s\n",
			shellQuote(os.Args[0]), a[1], shellQuote(a[2]), shellQuote(filepath.Join(ws, "result."+a[0])))
	}
	script.WriteString(sandboxTurns[KindPi][1])
	f := newFake(t, script.String())
	sb := &tools.Sandbox{Helper: []string{os.Args[0], "-test.run=^TestHelperConfineCLI$", "--"}, Bwrap: bwrap, Protected: []string{data}}
	r := f.runner(KindPi, func(o *Options) {
		o.WorkDir, o.Sandbox = ws, sb
		o.Env = append(o.Env, "HOME="+t.TempDir(), "CONFINE_HELPER=1", "ESCAPE_HELPER=1")
	})
	res, _, err := run(t, r, Request{Prompt: "try"})
	if err != nil || res.Text != "Done." {
		t.Fatalf("Run: %q, %v (stderr %q)", res.Text, err, res.Stderr)
	}
	if got := strings.TrimSpace(readFile(t, ws, "result.workspace")); got != "0" {
		t.Errorf("writing in its folder inside the data folder exited %s", got)
	}
	if got := strings.TrimSpace(readFile(t, ws, "result.protected")); got == "0" {
		t.Errorf("writing the data folder's policy.json worked")
	}
	if b, _ := os.ReadFile(filepath.Join(data, "policy.json")); string(b) != "{}" {
		t.Errorf("policy.json = %q", b)
	}
}
