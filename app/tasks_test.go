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

// taskDesk is the real service running tasks on a clock the test moves, and
// the real desktop runner (gate, audit, executor, Inbox approvals) beside it:
// as a window (App started) or headless.
type taskDesk struct {
	svc    *service.Service
	c      *api.Client
	runner *Runner
	app    *App
	ws     string
	mu     sync.Mutex
	now    time.Time
}

func (d *taskDesk) clock() time.Time { d.mu.Lock(); defer d.mu.Unlock(); return d.now }
func (d *taskDesk) set(t time.Time)  { d.mu.Lock(); d.now = t; d.mu.Unlock() }

func newTaskDesk(t *testing.T, start time.Time, headless bool, policy string) *taskDesk {
	t.Helper()
	d := &taskDesk{now: start}
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	cfg, err := config.Parse("tasks.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: realToken,
		Now: d.clock, RunTasks: true, TaskLookEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	dir := t.TempDir()
	d.ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(d.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(pp, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: d.ws, AuditPath: filepath.Join(dir, "audit.db"), PolicyPath: pp, Headless: headless,
		Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	d.svc, d.runner, d.c = svc, runner, api.NewClient(srv.URL, realToken, &http.Client{})
	sc := api.NewClient(srv.URL, realToken, NewStreamHTTPClient())
	if headless {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- RunHeadless(ctx, HeadlessOptions{Client: d.c, StreamClient: sc, Tools: runner, Approvals: runner.Approvals(), Poll: 20 * time.Millisecond})
		}()
		t.Cleanup(func() { cancel(); <-done; runner.Close() })
		return d
	}
	a, err := New(Options{Client: d.c, StreamClient: sc, Emit: func(string, any) {}, Tools: runner, Prompts: runner.Prompts(),
		Audit: runner.Audit(), Approvals: runner.Approvals()})
	if err != nil {
		t.Fatal(err)
	}
	Start(a)
	d.app = a
	t.Cleanup(func() { Shutdown(a); runner.Close() })
	return d
}

// tick runs the due tasks at the test's clock, in the background (a run may
// wait for an approval); the returned channel closes when they end.
func (d *taskDesk) tick(t *testing.T) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.svc.TickTasks(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	return done
}

func (d *taskDesk) waitInbox(t *testing.T, what string, ok func(api.InboxItem) bool) api.InboxItem {
	t.Helper()
	var found api.InboxItem
	var seen []api.InboxItem
	defer func() {
		if t.Failed() {
			t.Logf("the Inbox last held %+v", seen)
		}
	}()
	testwait.Until(t, what, 20*time.Second, func() bool {
		in, err := d.c.Inbox(context.Background(), true)
		if err != nil {
			return false
		}
		seen = in.Items
		for _, it := range in.Items {
			if ok(it) {
				found = it
				return true
			}
		}
		return false
	})
	return found
}

// TestTaskApprovalWaitsInTheInboxAndIsApprovedThere: a task's run reaches a
// write the policy asks about; with the window open it is neither prompted
// nor denied: it waits in the Inbox, and approved from the Inbox through the
// desktop's runner it runs, is audited as the user's, and the run completes.
func TestTaskApprovalWaitsInTheInboxAndIsApprovedThere(t *testing.T) {
	now := time.Now()
	d := newTaskDesk(t, now.Add(-61*time.Second), false, `{}`)
	if _, err := d.c.PutTask(context.Background(), api.Task{Name: "Morning note", Schedule: "every minute",
		Tools: []string{"write_file"}, Prompt: `summarise [[tool write_file {"path":"today.md","content":"summary"}]]`}); err != nil {
		t.Fatal(err)
	}
	d.set(now)
	ran := d.tick(t)
	ap := d.waitInbox(t, "the approval in the Inbox", func(it api.InboxItem) bool { return it.Kind == "approval" && it.State == "pending" })
	if len(d.runner.Prompts().Pending()) != 0 {
		t.Fatal("a task's call was prompted in the window")
	}
	if _, err := os.Stat(filepath.Join(d.ws, "today.md")); err == nil {
		t.Fatal("the write ran before anyone approved it")
	}
	if err := d.app.InboxDecide(ap.ID, "allow"); err != nil {
		t.Fatal(err)
	}
	<-ran
	if b, err := os.ReadFile(filepath.Join(d.ws, "today.md")); err != nil || string(b) != "summary" {
		t.Fatalf("today.md = %q, %v", b, err)
	}
	// Decided in the window, the approval is read: the sidebar's unread
	// count does not keep counting what the user just answered.
	d.waitInbox(t, "the approval marked allowed and read", func(it api.InboxItem) bool { return it.ID == ap.ID && it.State == "allowed" && it.Read })
	res := d.waitInbox(t, "the run's result", func(it api.InboxItem) bool { return it.Kind == "result" })
	if res.SessionID != ap.SessionID {
		t.Fatalf("result in session %s, approval in %s", res.SessionID, ap.SessionID)
	}
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 1 || es[0].Decision != audit.Allowed || es[0].DecidedBy != audit.ByUser || es[0].SessionID != ap.SessionID {
		t.Fatalf("audit %+v %v", es, err)
	}
	if err := d.app.InboxDecide(ap.ID, "allow"); err == nil {
		t.Fatal("an approval was decided twice")
	}
}

// TestTaskApprovalExpiresAtTheDeadline: with the window closed (headless)
// nobody decides; at the task's deadline the call is denied, audited as
// expired, the Inbox says so, and the run ends.
func TestTaskApprovalExpiresAtTheDeadline(t *testing.T) {
	// The service's clock runs a minute behind the real one, so that the
	// run's one-minute approval wait ends 15 seconds from now (a run that
	// reached its call only after the deadline, on a busy machine, would
	// put no approval in the Inbox).
	tick := time.Now().Add(-45 * time.Second)
	d := newTaskDesk(t, tick.Add(-61*time.Second), true, `{}`)
	if _, err := d.c.PutTask(context.Background(), api.Task{Name: "Cleanup", Schedule: "every minute", Tools: []string{"delete_path"}, ApprovalWaitMinutes: 1,
		Prompt: `[[tool delete_path {"path":"keep.txt"}]]`}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.ws, "keep.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.set(tick)
	ran := d.tick(t)
	// Pending for a few seconds only: on a busy machine it may already be
	// expired when first seen.
	d.waitInbox(t, "the approval in the Inbox", func(it api.InboxItem) bool { return it.Kind == "approval" })
	d.waitInbox(t, "the approval expired", func(it api.InboxItem) bool { return it.Kind == "approval" && it.State == "expired" })
	<-ran
	if b, err := os.ReadFile(filepath.Join(d.ws, "keep.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("keep.txt = %q, %v", b, err)
	}
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 1 || es[0].Decision != audit.Denied || es[0].DecidedBy != audit.ByExpired {
		t.Fatalf("audit %+v %v", es, err)
	}
	d.waitInbox(t, "the run's outcome", func(it api.InboxItem) bool { return it.Kind == "result" })
}

// TestTaskCallOutsideItsToolsIsDeniedByTheDesktop: even a call the service
// sent (it never does) for a tool the task was not given is denied and
// audited by the desktop's runner, without running or asking.
func TestTaskCallOutsideItsToolsIsDeniedByTheDesktop(t *testing.T) {
	dir := t.TempDir()
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: dir, AuditPath: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	d := runner.Run(context.Background(), "g_1", api.ToolCall{ID: "tc_1", Name: "write_file", Arguments: []byte(`{"path":"x","content":"y"}`),
		Task: &api.TaskRef{TaskID: "task_1", TaskName: "Reader", Tools: []string{"read_file"}, Deadline: time.Now().Add(time.Hour).Format(time.RFC3339)}})
	if d.Decision != audit.Denied || len(runner.Approvals().Pending()) != 0 {
		t.Fatalf("decision %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("the write ran")
	}
	es, err := runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil || len(es) != 1 || es[0].Decision != audit.Denied {
		t.Fatalf("audit %+v %v", es, err)
	}
}

// TestRemindMeEveryMondayIsConfirmedBeforeItIsCreated: "remind me every
// Monday…" in a conversation reaches the window as a prompt showing the
// schedule and the task's tools in words; denied, no task exists; allowed,
// it does, with the tools asked for and nothing more.
func TestRemindMeEveryMondayIsConfirmedBeforeItIsCreated(t *testing.T) {
	d := newTaskDesk(t, time.Now(), false, `{}`)
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	ask := `remind me [[tool schedule_task {"name":"Weekly review","prompt":"remind me to review the week","schedule":"every Monday at 9:00","time_zone":"Europe/Berlin","tools":["memory_search"]}]]`
	for _, choice := range []string{"deny", "once"} {
		done := make(chan error, 1)
		go func() { _, err := d.c.Chat(context.Background(), s.SessionID, ask); done <- err }()
		var p gate.Prompt
		testwait.Until(t, "the schedule_task prompt", 20*time.Second, func() bool {
			ps := d.runner.Prompts().Pending()
			if len(ps) > 0 {
				p = ps[0]
			}
			return len(ps) > 0
		})
		var shown string
		for _, f := range p.Decisive {
			shown += f.Name + ": " + f.Value + "\n"
		}
		if p.Tool != "schedule_task" || !strings.Contains(shown, "every Monday at 9:00 (Europe/Berlin)") || !strings.Contains(shown, "search your notes (memory); nothing else") {
			t.Fatalf("prompt %s shows:\n%s", p.Tool, shown)
		}
		if err := d.app.ResolvePrompt(p.ID, choice, ""); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ts, err := d.c.Tasks(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if choice == "deny" && len(ts) != 0 {
			t.Fatalf("a denied schedule_task created %+v", ts)
		}
		if choice == "once" && (len(ts) != 1 || ts[0].Source != "conversation" || ts[0].Agent != "general" || len(ts[0].Tools) != 1 || ts[0].Tools[0] != "memory_search") {
			t.Fatalf("tasks after allowing: %+v", ts)
		}
	}
}

// TestHeadlessGivesWayToAWindow: a window starting on the data dir asks the
// headless process holding it to stop, over the control socket; a window
// holding it does not give way.
func TestHeadlessGivesWayToAWindow(t *testing.T) {
	dir := t.TempDir()
	runner, err := NewToolRunner(ToolRunnerOptions{Workspace: t.TempDir(), AuditPath: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	yielded := make(chan struct{})
	srv, err := ServeControl(dir, runner, nil, func() { close(yielded) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !AskToYield(dir) {
		t.Fatal("the headless process did not agree to give way")
	}
	<-yielded
	srv.Close()
	if srv, err = ServeControl(dir, runner, nil, nil, nil); err != nil { // a window
		t.Fatal(err)
	}
	defer srv.Close()
	if AskToYield(dir) {
		t.Fatal("a window gave way")
	}
	if err := DecideFromTerminal(dir, "ap_nothing", "allow"); err == nil || !strings.Contains(err.Error(), "nothing waits for approval") {
		t.Fatalf("deciding an approval that does not wait: %v", err)
	}
}
