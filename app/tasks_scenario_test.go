package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/internal/testpeer"
	"jarvis/internal/testwait"
	"jarvis/service"
	"jarvis/service/config"
)

// TestEveryWeekdaySummaryWithTheWindowClosed walks the done-when
// scenario on a fake clock, with the real service, gate, audit log and
// runner: in the window, "every weekday at 8:00, summarise yesterday's
// notes into today's note" (the model calls schedule_task; the window's
// prompt shows the schedule and tools in words; allowed); the window
// closes; a headless process (the systemd unit's) follows the service; at
// Monday 8:00 the run reads Sunday's note (allowed by the gate) and its
// write of today's note waits in the Inbox; approved there, it runs; a
// window opened again finds the result and the decided approval in the
// Inbox and opens the run's conversation.
func TestEveryWeekdaySummaryWithTheWindowClosed(t *testing.T) {
	var mu sync.Mutex
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Date(2026, 11, 27, 20, 0, 0, 0, berlin) // a Friday evening
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }

	model, err := testpeer.WeekdayNotes("2026-11-30")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(&testpeer.OpenAI{Respond: model})
	t.Cleanup(up.Close)
	cfg, err := config.Parse("config.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: realToken,
		Now: clock, RunTasks: true, TaskLookEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	c := api.NewClient(srv.URL, realToken, &http.Client{})
	sc := api.NewClient(srv.URL, realToken, NewStreamHTTPClient())
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes", "2026-11-29.md"), []byte("Sunday: walked; planned the week.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(pp, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	newRunner := func(headless bool) *Runner {
		r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: pp, Headless: headless,
			Prompter: gate.PrompterOptions{Timeout: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	openWindow := func() (*App, *Runner) {
		r := newRunner(false)
		a, err := New(Options{Client: c, StreamClient: sc, Emit: func(string, any) {}, Tools: r, Prompts: r.Prompts(), Audit: r.Audit(), Approvals: r.Approvals()})
		if err != nil {
			t.Fatal(err)
		}
		Start(a)
		return a, r
	}

	// 1. In the window: ask; the schedule_task prompt says when and what in words; allow.
	win, wr := openWindow()
	s, err := win.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := win.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	asked := make(chan error, 1)
	go func() {
		_, err := c.Chat(context.Background(), s.SessionID, testpeer.WeekdayNote)
		asked <- err
	}()
	var p gate.Prompt
	testwait.Until(t, "the schedule_task prompt in the window", 20*time.Second, func() bool {
		ps := wr.Prompts().Pending()
		if len(ps) > 0 {
			p = ps[0]
		}
		return len(ps) > 0
	})
	var shown strings.Builder
	for _, f := range p.Decisive {
		shown.WriteString(f.Name + ": " + f.Value + "\n")
	}
	if p.Tool != "schedule_task" || !strings.Contains(shown.String(), "every weekday (Monday to Friday) at 8:00 (Europe/Berlin)") ||
		!strings.Contains(shown.String(), "read files in the workspace, write files in the workspace; nothing else") {
		t.Fatalf("the prompt shows:\n%s", shown.String())
	}
	if err := win.ResolvePrompt(p.ID, "once", ""); err != nil {
		t.Fatal(err)
	}
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	ts, err := win.Tasks()
	if err != nil || len(ts) != 1 || ts[0].Source != "conversation" || ts[0].NextRun != "2026-11-30T07:00:00Z" {
		t.Fatalf("the task: %+v %v", ts, err)
	}

	// 2. The window closes; the headless process runs the tasks.
	Shutdown(win)
	wr.Close()
	hr := newRunner(true)
	hctx, stopHeadless := context.WithCancel(context.Background())
	hdone := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		hdone <- RunHeadless(hctx, HeadlessOptions{Client: c, StreamClient: sc, Tools: hr, Approvals: hr.Approvals(), Poll: 20 * time.Millisecond,
			Ready: func() { close(ready) }})
	}()
	<-ready

	// 3. The weekend passes (nothing runs); Monday 8:00 the run starts.
	set(time.Date(2026, 11, 28, 8, 0, 10, 0, berlin)) // Saturday
	if err := svc.TickTasks(context.Background()); err != nil {
		t.Fatal(err)
	}
	set(time.Date(2026, 11, 30, 8, 0, 10, 0, berlin))
	ran := make(chan error, 1)
	go func() { ran <- svc.TickTasks(context.Background()) }()
	var ap api.InboxItem
	testwait.Until(t, "today's note's write waiting in the Inbox", 20*time.Second, func() bool {
		in, err := c.Inbox(context.Background(), false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.Kind == "approval" && it.State == "pending" {
				ap = it
				return true
			}
		}
		return false
	})
	if ap.Title != "Daily note: waiting for your approval to write files in the workspace" {
		t.Fatalf("approval %+v", ap)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes", "2026-11-30.md")); err == nil {
		t.Fatal("today's note was written before the approval")
	}
	// 4. Approved from the Inbox (what `jarvis inbox allow` hands to this process).
	if err := hr.Approvals().Decide(ap.ID, gate.Once); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes", "2026-11-30.md")); err != nil || !strings.Contains(string(b), "Summary of Sunday") {
		t.Fatalf("today's note: %q %v", b, err)
	}
	testwait.Until(t, "the approval's outcome recorded in the Inbox", 20*time.Second, func() bool {
		in, err := c.Inbox(context.Background(), false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.ID == ap.ID {
				return it.State == "allowed"
			}
		}
		return false
	})
	stopHeadless()
	if err := <-hdone; err != nil {
		t.Fatal(err)
	}
	es, err := hr.Audit().List(context.Background(), audit.Filter{SessionID: ap.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	hr.Close()
	byTool := map[string]audit.Entry{}
	for _, e := range es {
		byTool[e.Tool] = e
	}
	if byTool["read_file"].Decision != audit.Allowed || byTool["write_file"].Decision != audit.Allowed || byTool["write_file"].DecidedBy != audit.ByUser {
		t.Fatalf("audit of the run: %+v", es)
	}

	// 5. The window opens again: the result and the decided approval are in the Inbox.
	win2, wr2 := openWindow()
	t.Cleanup(func() { Shutdown(win2); wr2.Close() })
	in, err := win2.Inbox(false)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]api.InboxItem{}
	for _, it := range in.Items {
		kinds[it.Kind+" "+it.State] = it
	}
	res, ok := kinds["result open"]
	if !ok || res.Title != "Daily note" || !strings.Contains(res.Body, "notes/2026-11-30.md") || res.SessionID != ap.SessionID || in.Unread < 2 {
		t.Fatalf("the Inbox: %+v", in)
	}
	if _, ok := kinds["approval allowed"]; !ok {
		t.Fatalf("the approval's outcome: %+v", in)
	}
	tr, err := win2.OpenSession(res.SessionID)
	if err != nil || !strings.Contains(fmt.Sprint(tr), "notes/2026-11-30.md") {
		t.Fatalf("the run's conversation: %+v %v", tr, err)
	}
}
