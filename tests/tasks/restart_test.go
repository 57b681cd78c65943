package tasks_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

// start starts `jarvis --headless` on h's data dir and waits until it
// follows the sessions.
func (h *headless) start(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	h.log.Reset()
	h.mu.Unlock()
	h.cmd = exec.Command(h.bin, "--headless", "--data-dir", h.dataDir, "--config", h.cfg, "--workspace", h.ws)
	h.cmd.Env = h.env
	pr, pw := io.Pipe()
	h.cmd.Stderr = pw
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := h.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); pw.Close() })
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
}

func (h *headless) stop(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("jarvis --headless on SIGTERM: %v\n%s", err, h.stderr())
	}
}

// TestAnApprovalOutlivesARestartOfTheHeadlessBinary: the real `jarvis
// --headless` runs a task whose delete waits for approval; the process is
// stopped (SIGTERM) and the approval is still in `jarvis inbox`; started
// again, `jarvis inbox allow ID` (handed to the new process) resumes the
// stopped run from that call: the file is deleted without a second
// approval and the run's result comes to the Inbox.
func TestAnApprovalOutlivesARestartOfTheHeadlessBinary(t *testing.T) {
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
	write(filepath.Join(h.dataDir, "policy.json"), `{"rules":[]}`)
	write(filepath.Join(h.ws, "old.md"), "old")
	// Once, at the next minute (missed by a slow start, it is caught up).
	at := time.Now().UTC().Add(time.Minute).Format("2006-01-02 15:04")
	write(filepath.Join(filepath.Dir(h.cfg), "tasks.json"), `{"tasks":[{"name":"Tidy","schedule":"at `+at+`","time_zone":"UTC","tools":["delete_path"],
		"prompt":"[[tool delete_path {\"path\":\"old.md\"}]]"}]}`)
	h.env = quietEnv(dir)
	if out, err := h.jarvis(t, "config", "approve", "--yes", "--data-dir", h.dataDir, "--config", h.cfg); err != nil {
		t.Fatalf("jarvis config approve: %v\n%s", err, out)
	}

	h.start(t)
	var id string
	re := regexp.MustCompile(`id (ap_\S+)`)
	pending := func() bool {
		out, err := h.jarvis(t, "inbox", "--data-dir", h.dataDir)
		i := strings.Index(out, "approval pending  Tidy: waiting for your approval to delete files in the workspace")
		if err != nil || i < 0 {
			return false
		}
		id = re.FindStringSubmatch(out[i:])[1]
		return true
	}
	testwait.Until(t, "the delete waiting in `jarvis inbox`", 100*time.Second, pending)
	first := id

	h.stop(t)
	if !pending() || id != first {
		out, _ := h.jarvis(t, "inbox", "--all", "--data-dir", h.dataDir)
		t.Fatalf("the approval after the process stopped:\n%s", out)
	}
	h.start(t)
	if !pending() || id != first {
		out, _ := h.jarvis(t, "inbox", "--all", "--data-dir", h.dataDir)
		t.Fatalf("the approval after the restart:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "old.md")); err != nil {
		t.Fatalf("old.md went before the approval: %v", err)
	}
	if out, err := h.jarvis(t, "inbox", "allow", id, "--data-dir", h.dataDir); err != nil || !strings.Contains(out, "allowed") {
		t.Fatalf("jarvis inbox allow after the restart: %v\n%s", err, out)
	}
	testwait.Until(t, "the allowed delete to run in the resumed run", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(h.ws, "old.md"))
		return os.IsNotExist(err)
	})
	testwait.Until(t, "the approval allowed and the run's result in the Inbox", 30*time.Second, func() bool {
		out, _ := h.jarvis(t, "inbox", "--data-dir", h.dataDir)
		return strings.Contains(out, "approval allowed") && strings.Contains(out, "result   open     Tidy")
	})
	if out, _ := h.jarvis(t, "inbox", "--data-dir", h.dataDir); strings.Contains(out, "approval pending") {
		t.Fatalf("a second approval was asked for:\n%s", out)
	}
	h.stop(t)
	if !strings.Contains(h.stderr(), `decided_by=user`) {
		t.Fatalf("the restarted process did not log the user's decision:\n%s", h.stderr())
	}
	if !strings.Contains(h.stderr(), "tasks: run resumed") || strings.Contains(h.stderr(), "run not resumed") {
		t.Fatalf("the stopped run was not resumed:\n%s", h.stderr())
	}
}
