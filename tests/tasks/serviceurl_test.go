package tasks_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/proc"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
)

// TestTasksRunInJarvisServiceWithTheDesktopAttached: tasks under
// --service-url. The real jarvis-service binary runs the scheduler (its
// tasks.json's every-minute task runs at the minute); `jarvis --headless
// --service-url` attached to it executes the runs' calls through its gate;
// a call that needs approval ("Run now" of a task that deletes) waits in the
// service's Inbox, is approved with `jarvis inbox allow` handed to the
// attached process, runs, and the run's result comes to the Inbox.
func TestTasksRunInJarvisServiceWithTheDesktopAttached(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jarvis and jarvis-service and waits for the next minute")
	}
	dir := t.TempDir()
	desk, err := proc.Build(dir, "jarvis", "desktop", "production", "webkit2_41", "sqlite_fts5", "blankpage")
	if err != nil {
		t.Fatal(err)
	}
	svcBin, err := proc.BuildService(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	conf, svcData, deskData, ws := filepath.Join(dir, "conf"), filepath.Join(dir, "svc"), filepath.Join(dir, "desktop"), filepath.Join(dir, "ws")
	for _, d := range []string{conf, deskData, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(conf, "config.json")
	write(cfgPath, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1"))
	write(filepath.Join(conf, "tasks.json"), `{"tasks":[{"name":"Minute note","schedule":"every minute","tools":["write_file"],
		"prompt":"[[tool write_file {\"path\":\"minute.md\",\"content\":\"ran\"}]]"}]}`)
	// The desktop's policy allows the minute's note; deleting asks.
	write(filepath.Join(deskData, "policy.json"), `{"rules":[{"tool":"write_file","args":{"path":"minute.md"},"action":"allow"}]}`)
	write(filepath.Join(ws, "old.md"), "old")

	svc, err := proc.Start(svcBin, []string{"--addr", "127.0.0.1:0", "--data-dir", svcData, "--trust-config", "--config", cfgPath}, []string{"JARVIS_TOKEN="}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Kill)
	tok, err := os.ReadFile(filepath.Join(svcData, "token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	c := api.NewClient(svc.URL, token, &http.Client{})

	env := append(quietEnv(dir), "JARVIS_TOKEN="+token)
	h := &headless{bin: desk, dir: dir, dataDir: deskData, ws: ws, env: env}
	h.cmd = exec.Command(desk, "--headless", "--service-url", svc.URL, "--data-dir", deskData, "--workspace", ws)
	h.cmd.Env = env
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
	testwait.Until(t, "jarvis --headless --service-url to follow the service", time.Minute, func() bool {
		return strings.Contains(h.stderr(), "headless: following every session")
	})

	ctx := context.Background()
	tidy, err := c.PutTask(ctx, api.Task{Name: "Tidy", Schedule: "hourly", Tools: []string{"delete_path"},
		Prompt: `[[tool delete_path {"path":"old.md"}]]`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunTaskNow(ctx, tidy.ID); err != nil {
		t.Fatalf("run now in jarvis-service: %v", err)
	}
	var pending api.InboxItem
	testwait.Until(t, "the delete's approval in the service's Inbox", 30*time.Second, func() bool {
		in, err := c.Inbox(ctx, false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.Kind == "approval" && it.State == "pending" && it.TaskID == tidy.ID {
				pending = it
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(ws, "old.md")); err != nil {
		t.Fatalf("old.md went before the approval: %v", err)
	}
	// `jarvis inbox` on the attached process's data dir lists the
	// service's Inbox: the one its allow acts on.
	if out, err := h.jarvis(t, "inbox", "--data-dir", deskData); err != nil || !strings.Contains(out, "id "+pending.ID) || !strings.Contains(out, "pending") {
		t.Fatalf("jarvis inbox beside the attached process does not list the service's approval %s: %v\n%s", pending.ID, err, out)
	}
	if out, err := h.jarvis(t, "inbox", "allow", pending.ID, "--data-dir", deskData); err != nil || !strings.Contains(out, "allowed") {
		t.Fatalf("jarvis inbox allow: %v\n%s", err, out)
	}
	testwait.Until(t, "the approved delete to run", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(ws, "old.md"))
		return os.IsNotExist(err)
	})
	// The every-minute task of tasks.json runs at the minute, in the service.
	testwait.Until(t, "the every-minute task to write its note", 90*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(ws, "minute.md"))
		return err == nil && string(b) == "ran"
	})
	testwait.Until(t, "both runs' results in the service's Inbox", 30*time.Second, func() bool {
		in, err := c.Inbox(ctx, false)
		if err != nil {
			return false
		}
		got := map[string]bool{}
		for _, it := range in.Items {
			got[it.Kind+" "+it.State+" "+it.Title] = true
		}
		return got["result open Tidy"] && got["result open Minute note"] && got["approval allowed "+pending.Title]
	})
	// Marked done from the terminal beside the attached process, in the
	// service's Inbox.
	var tidyResult string
	if in, err := c.Inbox(ctx, false); err == nil {
		for _, it := range in.Items {
			if it.Kind == "result" && it.TaskID == tidy.ID {
				tidyResult = it.ID
			}
		}
	}
	if out, err := h.jarvis(t, "inbox", "done", tidyResult, "--data-dir", deskData); err != nil {
		t.Fatalf("jarvis inbox done: %v\n%s", err, out)
	}
	if in, err := c.Inbox(ctx, true); err != nil || !isDone(in, tidyResult) {
		t.Fatalf("the result %s is not done in the service's Inbox: %v %+v", tidyResult, err, in)
	}
	if !strings.Contains(svc.Stderr(), "tasks: run started") {
		t.Fatalf("the runs did not start in jarvis-service:\n%s", svc.Stderr())
	}

	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("jarvis --headless on SIGTERM: %v\n%s", err, h.stderr())
	}
	if err := svc.Stop(); err != nil {
		t.Fatalf("jarvis-service on stop: %v\n%s", err, svc.Stderr())
	}
}

func isDone(in api.Inbox, id string) bool {
	for _, it := range in.Items {
		if it.ID == id {
			return it.State == "done"
		}
	}
	return false
}
