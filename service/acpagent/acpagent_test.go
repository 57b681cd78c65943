package acpagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agentBin is the scripted ACP agent (testdata/scriptedagent), built once.
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "acpagent-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	agentBin = filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", agentBin, "./testdata/scriptedagent").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the scripted agent: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// fileHost serves the agent's requests the way the desktop's executor
// does, on real files, and answers permission requests with allow (or
// fails them with permErr); it records every call.
type fileHost struct {
	allow   bool
	permErr error
	runErr  error // RunCommand's answer instead of running: a denial

	mu    sync.Mutex
	calls []string
	perms []Permission
}

func (h *fileHost) record(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
}

func (h *fileHost) RequestPermission(ctx context.Context, p Permission) (bool, error) {
	h.mu.Lock()
	h.perms = append(h.perms, p)
	h.mu.Unlock()
	h.record("permission " + p.Title)
	if h.permErr != nil {
		return false, h.permErr
	}
	return h.allow, nil
}

func (h *fileHost) ReadTextFile(_ context.Context, path string, _, _ int) (string, error) {
	h.record("read " + path)
	b, err := os.ReadFile(path)
	return string(b), err
}

func (h *fileHost) WriteTextFile(_ context.Context, path, content string) error {
	h.record("write " + path)
	return os.WriteFile(path, []byte(content), 0o600)
}

// RunCommand runs the program for real in c.Cwd, as the desktop's
// run_command does once the gate allows it.
func (h *fileHost) RunCommand(ctx context.Context, c Command) (CommandOutput, error) {
	h.record(fmt.Sprintf("run %s %q in %s", c.Program, c.Args, c.Cwd))
	if h.runErr != nil {
		return CommandOutput{}, h.runErr
	}
	cmd := exec.CommandContext(ctx, c.Program, c.Args...)
	cmd.Dir = c.Cwd
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return CommandOutput{Output: string(out), ExitCode: ee.ExitCode()}, nil
	case err != nil:
		return CommandOutput{}, err
	}
	return CommandOutput{Output: string(out)}, nil
}

type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) on(ev Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) kinds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.evs {
		switch {
		case ev.TextDelta != "":
			out = append(out, "text:"+ev.TextDelta)
		case ev.ThoughtDelta != "":
			out = append(out, "thought:"+ev.ThoughtDelta)
		case ev.Status != "":
			out = append(out, "status:"+ev.Status)
		case ev.Plan != nil:
			out = append(out, fmt.Sprintf("plan:%d", len(ev.Plan)))
		case ev.Notice != "":
			out = append(out, "notice:"+ev.Notice)
		}
	}
	return out
}

type fixture struct {
	t   *testing.T
	dir string // the agent's working folder
	a   *Agent
}

func newFixture(t *testing.T, env ...string) *fixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	a, err := New(Options{Command: agentBin, WorkDir: dir, GracePeriod: 300 * time.Millisecond, InitTimeout: 10 * time.Second,
		MaxLine: 1 << 20, Env: append(env, "SCRIPTED_DIR="+dir)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return &fixture{t: t, dir: dir, a: a}
}

func (f *fixture) prompt(text string, h Host) (Result, *events, error) {
	f.t.Helper()
	return f.promptIn(Input{Text: text}, h)
}

func (f *fixture) promptIn(in Input, h Host) (Result, *events, error) {
	f.t.Helper()
	if h == nil {
		h = &fileHost{}
	}
	ctx, cancel := context.WithTimeout(f.t.Context(), 20*time.Second)
	defer cancel()
	ev := &events{}
	res, err := f.a.Prompt(ctx, in, h, ev.on)
	return res, ev, err
}

func TestStreamingAndTheProcessIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res, ev, err := f.prompt("stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"thought:Thinking it over.", "text:Hello, ", "plan:2", "status:tool: List files (search) — in progress",
		"status:tool: List files — completed", "text:world."}
	if got := ev.kinds(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
	if res.Text != "Hello, world." || res.StopReason != "end_turn" || res.SessionID == "" || res.SessionLost {
		t.Errorf("Result %+v", res)
	}
	first, _, _ := f.prompt("whoami", nil)
	second, _, err := f.prompt("whoami", nil)
	if err != nil || first.Text != second.Text || !strings.Contains(first.Text, "session="+res.SessionID) {
		t.Errorf("turns ran in different processes or sessions: %q, %q (%v)", first.Text, second.Text, err)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		host *fileHost
		want string
	}{
		// Allowed once, never "always": the gate keeps its own rules.
		{"allow", &fileHost{allow: true}, "selected once"},
		{"deny", &fileHost{allow: false}, "selected no"},
		{"timeout", &fileHost{allow: true, permErr: errors.New("no answer within 300 s")}, "selected no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res, _, err := f.prompt("perm", tt.host)
			if err != nil || res.Text != tt.want {
				t.Fatalf("Result %q, %v; want %q", res.Text, err, tt.want)
			}
			p := tt.host.perms[0]
			if p.Title != "Run rm -rf build" || p.Kind != "execute" || p.ToolCallID != "call_rm" || fmt.Sprint(p.RawInput) != "map[command:rm -rf build]" {
				t.Errorf("permission %+v", p)
			}
		})
	}
}

func TestFilesThroughTheHostInsideTheWorkingFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := &fileHost{}
	inside := filepath.Join(f.dir, "notes.txt")
	if res, _, err := f.prompt("write "+inside+" hello there", h); err != nil || res.Text != "wrote "+inside {
		t.Fatalf("write: %q %v", res.Text, err)
	}
	if b, _ := os.ReadFile(inside); string(b) != "hello there" {
		t.Fatalf("file holds %q", b)
	}
	if res, _, err := f.prompt("read "+inside, h); err != nil || res.Text != "read: hello there" {
		t.Fatalf("read: %q %v", res.Text, err)
	}
	outside := filepath.Join(t.TempDir(), "private.txt")
	os.WriteFile(outside, []byte("top-secret-content"), 0o600)
	link := filepath.Join(f.dir, "link.txt")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"read " + outside, "read " + link, "write " + outside + " x", "read notes.txt", "read " + f.dir + "/../escape"} {
		res, _, err := f.prompt(cmd, h)
		if err != nil || !strings.Contains(res.Text, "failed") || strings.Contains(res.Text, "top-secret-content") {
			t.Errorf("%s: %q %v; want a refusal", cmd, res.Text, err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "top-secret-content" {
		t.Errorf("the file outside was written: %q", b)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Join(h.calls, "|") != "write "+inside+"|read "+inside {
		t.Errorf("host calls %q: a refused path reached the host", h.calls)
	}
}

// Stop sends session/cancel and then ends the agent's whole process group
// and everything it started, even a child in a session of its own that
// ignores SIGINT and SIGTERM. The next turn starts the agent again and
// resumes its session with session/load, without replaying the history.
func TestCancelEndsEverythingAndTheSessionResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_LOAD=1")
	before, _, err := f.prompt("whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(f.dir, "child")); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, err = f.a.Prompt(ctx, Input{Text: "child"}, &fileHost{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(f.dir, "child"))))
	if !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the agent's child %d survived the cancel", pid)
	}
	if f.a.Running() {
		t.Error("the agent process is still kept after the cancel")
	}
	after, ev, err := f.prompt("whoami", nil)
	if err != nil || after.SessionLost || after.SessionID != before.SessionID || after.Text == before.Text {
		t.Fatalf("after the cancel: %+v %v (before %+v)", after, err, before)
	}
	if strings.Contains(strings.Join(ev.kinds(), "|"), "old history") {
		t.Errorf("session/load's replay was shown as this turn's output: %q", ev.kinds())
	}
}

// Without session/load, a restarted agent starts a new session and says so.
func TestCrashMidTurnThenANewSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first, _, err := f.prompt("whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := f.prompt("crash", nil)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "panic: scripted crash") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v", err)
	}
	if res.Text != "partial" {
		t.Errorf("partial text %q", res.Text)
	}
	next, _, err := f.prompt("whoami", nil)
	if err != nil || !next.SessionLost || next.SessionID == first.SessionID {
		t.Fatalf("next turn %+v %v; want a new session, reported lost", next, err)
	}
}

func TestBadFramesEndTheTurn(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"malformed": "not JSON-RPC",
		"unknown":   `unknown method "session/bogus"`,
		"huge":      "longer than 1048576 bytes",
	} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			_, _, err := f.prompt(cmd, nil)
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want ErrProtocol saying %q", err, want)
			}
			if res, _, err := f.prompt("whoami", nil); err != nil || !strings.HasPrefix(res.Text, "pid=") {
				t.Fatalf("the next turn: %+v %v", res, err)
			}
		})
	}
}

func TestAuthenticationRequired(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_AUTH=1")
	_, _, err := f.prompt("hello", nil)
	var ae *AuthRequiredError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *AuthRequiredError", err)
	}
	for _, want := range []string{"sign in", "Log in with Claude Code", "claude /login", "ANTHROPIC_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "-32000") || strings.Contains(err.Error(), "{") {
		t.Errorf("a raw JSON-RPC error reached the user: %q", err)
	}
}

func TestNeverInitializes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := New(Options{Command: agentBin, WorkDir: dir, InitTimeout: 500 * time.Millisecond, GracePeriod: 200 * time.Millisecond, Env: []string{"SCRIPTED_NOINIT=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Prompt(t.Context(), Input{Text: "hello"}, &fileHost{}, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer initialize within 500ms") {
		t.Fatalf("err = %v", err)
	}
	if a.Running() {
		t.Error("the silent agent is still running")
	}
}

func TestCommandNotFound(t *testing.T) {
	t.Parallel()
	a, err := New(Options{Command: "no-such-acp-agent", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(t.Context(), Input{Text: "hi"}, &fileHost{}, nil); err == nil || !strings.Contains(err.Error(), "not found on PATH") {
		t.Fatalf("err = %v", err)
	}
	if _, err := New(Options{Command: "x", WorkDir: "relative"}); err == nil {
		t.Error("a relative working folder was accepted")
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gone reports whether pid has exited (or is a zombie) within two seconds.
func gone(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
