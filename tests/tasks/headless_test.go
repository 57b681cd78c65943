// Package tasks_test runs scheduled tasks through the real `jarvis
// --headless` binary with the window closed: an every-minute task runs at
// the minute, a call needing approval waits in the Inbox and is approved
// with `jarvis inbox allow` (handed to the running process), a second
// headless process on the same data dir does not run anything.
package tasks_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

type headless struct {
	bin, dir, dataDir, ws, cfg string
	env                        []string
	cmd                        *exec.Cmd
	mu                         sync.Mutex
	log                        strings.Builder
}

func (h *headless) stderr() string { h.mu.Lock(); defer h.mu.Unlock(); return h.log.String() }

// jarvis runs a command of the binary beside the headless process.
func (h *headless) jarvis(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHeadlessRunsTasksWithTheWindowClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the desktop binary and waits for the next minute")
	}
	dir := t.TempDir()
	bin, err := proc.Build(dir, "jarvis", "desktop", "production", "webkit2_41", "sqlite_fts5", "blankpage")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	h := &headless{bin: bin, dir: dir, dataDir: filepath.Join(dir, "data"), ws: filepath.Join(dir, "ws"), cfg: filepath.Join(dir, "conf", "config.json")}
	for _, d := range []string{h.dataDir, h.ws, filepath.Dir(h.cfg), filepath.Join(dir, "xdg-config"), filepath.Join(dir, "xdg-data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(h.cfg, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1"))
	// The policy allows writing the minute's note; deleting asks.
	write(filepath.Join(h.dataDir, "policy.json"), `{"rules":[{"tool":"write_file","args":{"path":"minute.md"},"action":"allow"}]}`)
	write(filepath.Join(h.ws, "old.md"), "old")
	write(filepath.Join(filepath.Dir(h.cfg), "tasks.json"), `{"tasks":[
		{"name":"Minute note","schedule":"every minute","tools":["write_file"],
		 "prompt":"[[tool write_file {\"path\":\"minute.md\",\"content\":\"ran\"}]]"},
		{"name":"Tidy","schedule":"every minute","catch_up":"skip","tools":["delete_path"],
		 "prompt":"[[tool delete_path {\"path\":\"old.md\"}]] [[tool run_command {\"program\":\"true\"}]]"}]}`)
	h.env = quietEnv(dir)
	// A config written by hand is applied once approved, as a user does.
	if out, err := h.jarvis(t, "config", "approve", "--yes", "--data-dir", h.dataDir, "--config", h.cfg); err != nil {
		t.Fatalf("jarvis config approve: %v\n%s", err, out)
	}

	h.cmd = exec.Command(bin, "--headless", "--data-dir", h.dataDir, "--config", h.cfg, "--workspace", h.ws)
	h.cmd.Env = h.env
	pr, pw := io.Pipe()
	h.cmd.Stderr = pw
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cmd.Process.Kill(); h.cmd.Wait(); pw.Close() })
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			h.mu.Lock()
			h.log.WriteString(sc.Text() + "\n")
			h.mu.Unlock()
		}
	}()
	testwait.Until(t, "jarvis --headless to start", time.Minute, func() bool {
		return strings.Contains(h.stderr(), "headless: following every session")
	})

	// A second headless process on the same data dir runs nothing: it exits.
	out, err := h.jarvis(t, "--headless", "--data-dir", h.dataDir, "--config", h.cfg, "--workspace", h.ws)
	if err == nil || !strings.Contains(out, "it runs the tasks; this headless process exits") {
		t.Fatalf("a second headless process: %v\n%s", err, out)
	}

	// At the next minute the note is written (the policy allows it) …
	testwait.Until(t, "the every-minute task to write its note", 90*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(h.ws, "minute.md"))
		return err == nil && string(b) == "ran"
	})
	// … and the delete waits for approval in the Inbox: not denied.
	var id string
	re := regexp.MustCompile(`id (ap_\S+)`)
	testwait.Until(t, "the approval in `jarvis inbox`", 30*time.Second, func() bool {
		out, err := h.jarvis(t, "inbox", "--data-dir", h.dataDir)
		if err != nil || !strings.Contains(out, "approval pending  Tidy: waiting for your approval to delete files in the workspace") {
			return false
		}
		id = re.FindStringSubmatch(out[strings.Index(out, "approval pending"):])[1]
		return true
	})
	if _, err := os.Stat(filepath.Join(h.ws, "old.md")); err != nil {
		t.Fatalf("old.md went before the approval: %v", err)
	}
	if out, err := h.jarvis(t, "inbox", "allow", id, "--data-dir", h.dataDir); err != nil || !strings.Contains(out, "allowed") {
		t.Fatalf("jarvis inbox allow: %v\n%s", err, out)
	}
	testwait.Until(t, "the approved delete to run", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(h.ws, "old.md"))
		return os.IsNotExist(err)
	})
	testwait.Until(t, "both runs' results in the Inbox", 30*time.Second, func() bool {
		out, _ := h.jarvis(t, "inbox", "--data-dir", h.dataDir)
		return strings.Contains(out, "result   open     Minute note") && strings.Contains(out, "result   open     Tidy") &&
			strings.Contains(out, "approval allowed")
	})
	out, _ = h.jarvis(t, "inbox", "--data-dir", h.dataDir)
	// run_command was not among Tidy's tools: refused by the service, it
	// never reached the gate, and no approval was asked for it.
	if strings.Contains(out, "approval to run programs") {
		t.Fatalf("run_command reached the gate:\n%s", out)
	}

	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("jarvis --headless on SIGTERM: %v\n%s", err, h.stderr())
	}
	// The headless process logged the approved delete as the user's decision.
	if !strings.Contains(h.stderr(), `decided_by=user`) {
		t.Fatalf("the headless log has no user decision:\n%s", h.stderr())
	}
}

// TestHeadlessExitsWhenItsServiceCannotStart: a headless Jarvis whose
// service cannot open its database does not stay up answering every request
// with an error (a systemd unit would then sit there doing nothing): it
// says why and exits non-zero, and the unit starts it again later.
func TestHeadlessExitsWhenItsServiceCannotStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the desktop binary")
	}
	dir := t.TempDir()
	bin, err := proc.Build(dir, "jarvis", "desktop", "production", "webkit2_41", "sqlite_fts5", "blankpage")
	if err != nil {
		t.Fatal(err)
	}
	data, ws, cfg := filepath.Join(dir, "data"), filepath.Join(dir, "ws"), filepath.Join(dir, "conf", "config.json")
	for _, d := range []string{data, ws, filepath.Dir(cfg)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Not a database: the service's open fails.
	if err := os.WriteFile(filepath.Join(data, "jarvis.db"), []byte(strings.Repeat("not a database. ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"agents":[{"agentId":"general"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--data-dir", data, "--config", cfg, "--workspace", ws)
	cmd.Env = quietEnv(dir)
	var out strings.Builder
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(b) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	var werr error
	gone := false
	testwait.Until(t, "the headless Jarvis to exit", 60*time.Second, func() bool {
		select {
		case werr = <-exited:
			exited <- werr // for the cleanup
			gone = true
		default:
		}
		return gone
	})
	mu.Lock()
	log := out.String()
	mu.Unlock()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("exit %v, want a non-zero exit; log:\n%s", werr, log)
	}
	if !strings.Contains(log, "The agent service failed to start") || !strings.Contains(log, "not a database") {
		t.Fatalf("the log does not say why:\n%s", log)
	}
}

// quietEnv is this process's environment for a Jarvis under test: no
// display (no window), none of Jarvis's own variables, and XDG folders of
// its own under dir.
func quietEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") && !strings.HasPrefix(kv, "JARVIS_") &&
			!strings.HasPrefix(kv, "XDG_CONFIG_HOME=") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"), "XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
