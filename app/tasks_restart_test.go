package app

import (
	"context"
	"encoding/json"
	"errors"
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

// restartDesk is a data dir on which the service and a headless desktop
// are started, stopped and started again, as a process restarting.
type restartDesk struct {
	t       *testing.T
	dataDir string
	dir, ws string
	cfg     *config.Config
	mu      sync.Mutex
	now     time.Time

	peer   *testpeer.OpenAI
	svc    *service.Service
	srv    *httptest.Server
	c      *api.Client
	runner *Runner
	stopH  context.CancelFunc
	hdone  chan error
}

func (d *restartDesk) clock() time.Time { d.mu.Lock(); defer d.mu.Unlock(); return d.now }
func (d *restartDesk) set(t time.Time)  { d.mu.Lock(); d.now = t; d.mu.Unlock() }

func (d *restartDesk) start() {
	t := d.t
	svc, err := service.New(context.Background(), service.Options{DataDir: d.dataDir, Config: d.cfg, Token: realToken,
		Now: d.clock, RunTasks: true, TaskLookEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	d.svc, d.srv = svc, httptest.NewServer(svc.Handler())
	d.c = api.NewClient(d.srv.URL, realToken, &http.Client{})
	d.runner, err = NewToolRunner(ToolRunnerOptions{Workspace: d.ws, AuditPath: filepath.Join(d.dir, "audit.db"), PolicyPath: filepath.Join(d.dir, "policy.json"),
		Headless: true, Prompter: gate.PrompterOptions{Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stopH, d.hdone = cancel, make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		d.hdone <- RunHeadless(ctx, HeadlessOptions{Client: d.c, StreamClient: api.NewClient(d.srv.URL, realToken, NewStreamHTTPClient()),
			Tools: d.runner, Approvals: d.runner.Approvals(), Poll: 20 * time.Millisecond, Ready: func() { close(ready) }})
	}()
	<-ready
}

// stop ends the process: its service first (runs stopped), then the desktop.
func (d *restartDesk) stop() {
	if d.svc == nil {
		return
	}
	// The listener first: the headless follower would otherwise open a
	// new stream between closing the connections and Close, which then
	// waits for that stream forever (seen once in a loaded run).
	d.srv.Listener.Close()
	d.srv.CloseClientConnections()
	d.srv.Close()
	if err := d.svc.Close(); err != nil {
		d.t.Error(err)
	}
	d.stopH()
	<-d.hdone
	d.runner.Close()
	d.svc = nil
}

// runWaiting writes the workspace file name (its base name as content),
// puts t, runs it now with the clock at at, and returns it with its call's
// approval, pending.
func (d *restartDesk) runWaiting(name string, t api.Task, at time.Time) (api.Task, api.InboxItem) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.ws, name), []byte(strings.TrimSuffix(name, ".md")), 0o600); err != nil {
		d.t.Fatal(err)
	}
	task, err := d.c.PutTask(context.Background(), t)
	if err != nil {
		d.t.Fatal(err)
	}
	d.set(at)
	if _, err := d.c.RunTaskNow(context.Background(), task.ID); err != nil {
		d.t.Fatal(err)
	}
	return task, d.waitPending(task.ID)
}

// tidyWaiting puts the task Tidy (delete old.md, every minute, its calls
// waiting an hour for approval), runs its minute, and returns it with the
// delete's approval, pending; ticked gets the end of the scheduler's tick.
func (d *restartDesk) tidyWaiting() (task api.Task, ap api.InboxItem, ticked <-chan error) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.ws, "old.md"), []byte("old"), 0o600); err != nil {
		d.t.Fatal(err)
	}
	task, err := d.c.PutTask(context.Background(), api.Task{Name: "Tidy", Schedule: "every minute", CatchUp: "skip", Tools: []string{"delete_path"},
		ApprovalWaitMinutes: 60, Prompt: `[[tool delete_path {"path":"old.md"}]]`})
	if err != nil {
		d.t.Fatal(err)
	}
	d.set(time.Now())
	tc := make(chan error, 1)
	go func() { tc <- d.svc.TickTasks(context.Background()) }()
	return task, d.waitPending(task.ID), tc
}

func (d *restartDesk) item(id string) api.InboxItem {
	d.t.Helper()
	in, err := d.c.Inbox(context.Background(), true)
	if err != nil {
		d.t.Fatal(err)
	}
	for _, it := range in.Items {
		if it.ID == id {
			return it
		}
	}
	d.t.Fatalf("no Inbox item %s in %+v", id, in)
	return api.InboxItem{}
}

func newRestartDesk(t *testing.T) *restartDesk {
	peer := testpeer.NewOpenAI()
	up := httptest.NewServer(peer)
	t.Cleanup(up.Close)
	cfg, err := config.Parse("config.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},"agents":[{"agentId":"general"}]}`, up.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := &restartDesk{t: t, dataDir: filepath.Join(dir, "data"), dir: dir, ws: filepath.Join(dir, "ws"), cfg: cfg, now: time.Now().Add(-61 * time.Second), peer: peer}
	if err := os.MkdirAll(d.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	d.start()
	return d
}

// waitPending waits for the task's call to wait for approval in the Inbox.
func (d *restartDesk) waitPending(taskID string) api.InboxItem {
	d.t.Helper()
	var ap api.InboxItem
	testwait.Until(d.t, "the call waiting in the Inbox", 20*time.Second, func() bool {
		in, err := d.c.Inbox(context.Background(), false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.Kind == "approval" && it.State == "pending" && it.TaskID == taskID {
				ap = it
				return true
			}
		}
		return false
	})
	return ap
}

// TestAWaitingApprovalOutlivesARestart: a task's call waits for approval;
// the process stops (service and desktop). Started again, the Inbox still
// has the approval, with its call and deadline. The agent's model changed
// meanwhile, so the stopped run cannot go on from its call: allowed, the
// task runs again (the stopped run's conversation says why) and that call
// runs without waiting again (audited as the user's decision), and the new
// run's result comes to the Inbox.
func TestAWaitingApprovalOutlivesARestart(t *testing.T) {
	d := newRestartDesk(t)
	task, ap, ticked := d.tidyWaiting()
	if ap.Call == nil || ap.Call.Tool != "delete_path" || ap.Deadline == "" {
		t.Fatalf("the approval keeps no call: %+v", ap)
	}

	d.stop() // the process stops while the call waits
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("config.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m2"}},"agents":[{"agentId":"general"}]}`, d.cfg.Providers["openai-compatible"].BaseURL)))
	if err != nil {
		t.Fatal(err)
	}
	d.cfg = cfg // another model: the run cannot go on
	d.start()
	if it := d.item(ap.ID); it.State != "pending" || it.Call == nil {
		t.Fatalf("after the restart: %+v", it)
	}
	if _, err := os.Stat(filepath.Join(d.ws, "old.md")); err != nil {
		t.Fatal("old.md went before anyone allowed it")
	}
	// Allowed from the Inbox of the restarted process.
	if err := d.runner.Approvals().Decide(ap.ID, gate.Once); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the call to run in the task's new run", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(d.ws, "old.md"))
		return os.IsNotExist(err)
	})
	if it := d.item(ap.ID); it.State != "allowed" {
		t.Fatalf("the approval: %+v", it)
	}
	var res api.InboxItem
	testwait.Until(t, "the new run's result", 20*time.Second, func() bool {
		in, err := d.c.Inbox(context.Background(), false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.Kind == "result" && it.TaskID == task.ID && it.RunID != ap.RunID {
				res = it
				return true
			}
		}
		return false
	})
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{SessionID: res.SessionID})
	if err != nil || len(es) != 1 || es[0].Tool != "delete_path" || es[0].Decision != audit.Allowed || es[0].DecidedBy != audit.ByUser {
		t.Fatalf("audit of the new run: %+v %v", es, err)
	}
	if in, _ := d.c.Inbox(context.Background(), false); countPending(in) != 0 {
		t.Fatalf("something still waits: %+v", in)
	}
	var tr api.Transcript
	if err := d.c.Do(context.Background(), http.MethodGet, "/v1/sessions/"+ap.SessionID+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	said := false
	for _, m := range tr.Messages {
		said = said || (m.Role == "status" && strings.Contains(m.Text, "the agent's model changed") && strings.Contains(m.Text, "started again"))
	}
	if !said {
		t.Fatalf("the stopped run's conversation does not say why the task was started again: %+v", tr.Messages)
	}
}

// TestAnAllowedApprovalResumesTheStoppedRun: a task's call waits for
// approval and the process stops. Allowed after the restart, the stored run
// goes on from that call: the call runs once (the user's decision in the
// audit log), and the model gets ONE request with the conversation so far
// (the task's prompt, its own call, the call's real result), not the prompt
// again; the run's answer is one result in the Inbox, for the same run.
func TestAnAllowedApprovalResumesTheStoppedRun(t *testing.T) {
	d := newRestartDesk(t)
	prompt := `Tidy up. [[tool delete_path {"path":"old.md"}]]`
	task, ap := d.runWaiting("old.md", api.Task{Name: "Tidy", Schedule: "at 2026-01-01 00:00", TimeZone: "UTC", CatchUp: "skip",
		Tools: []string{"delete_path"}, ApprovalWaitMinutes: 60, Prompt: prompt}, time.Now())
	d.stop()
	d.start()
	d.set(time.Now().Add(2 * time.Minute)) // a new run could start now: the old behaviour's re-run is not refused
	before := len(d.peer.Requests())
	if err := d.runner.Approvals().Decide(ap.ID, gate.Once); err != nil {
		t.Fatal(err)
	}
	var res api.InboxItem
	testwait.Until(t, "the resumed run's result", 20*time.Second, func() bool {
		in, err := d.c.Inbox(context.Background(), false)
		if err != nil {
			return false
		}
		for _, it := range in.Items {
			if it.Kind == "result" && it.TaskID == task.ID {
				res = it
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(d.ws, "old.md")); !os.IsNotExist(err) {
		t.Fatalf("old.md is still there: %v", err)
	}
	reqs := d.peer.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests after the restart, want 1 (the run resumed): %+v", len(reqs), reqs)
	}
	var sawPrompt, sawCall, sawResult bool
	for _, m := range reqs[0].Messages {
		switch {
		case m.Role == "user" && m.Content == prompt:
			sawPrompt = true
		case m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].Function.Name == "delete_path":
			sawCall = true
		case m.Role == "tool" && sawCall && !strings.Contains(m.Content, "not completed"):
			sawResult = true
		}
	}
	if !sawPrompt || !sawCall || !sawResult {
		t.Fatalf("the resumed request lacks the prompt (%v), the call (%v) or its real result (%v): %+v", sawPrompt, sawCall, sawResult, reqs[0].Messages)
	}
	if res.RunID != ap.RunID || res.SessionID != ap.SessionID || !strings.Contains(res.Body, "Tool results:") {
		t.Fatalf("the result is not the resumed run's answer: %+v (approval %+v)", res, ap)
	}
	in, err := d.c.Inbox(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, it := range in.Items {
		if it.Kind == "result" && it.TaskID == task.ID {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("%d results in the Inbox, want 1: %+v", results, in.Items)
	}
	for _, it := range in.Items {
		if it.Kind == "failure" && it.RunID == ap.RunID && it.State != "done" {
			t.Fatalf("the stop's failure item is still open though the run went on: %+v", it)
		}
	}
	// The run's conversation says it went on: a line that stays (kind "resumed").
	conv, err := svc{d.c}.messages(context.Background(), ap.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	for _, m := range conv.Messages {
		if m.Role == "status" && string(m.Meta) == `{"kind":"resumed"}` && strings.HasPrefix(m.Text, "Resumed:") {
			resumed++
		}
	}
	if resumed != 1 {
		t.Fatalf("%d resumed lines in the run's conversation, want 1: %+v", resumed, conv.Messages)
	}
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{SessionID: ap.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for _, e := range es {
		if e.Tool == "delete_path" && e.Decision == audit.Allowed {
			allowed++
			if e.DecidedBy != audit.ByUser {
				t.Fatalf("the call was not allowed as the user's: %+v", e)
			}
		}
	}
	if allowed != 1 {
		t.Fatalf("delete_path allowed %d times, want once: %+v", allowed, es)
	}
	// The stored conversation keeps the call's real result, once, in place
	// of the interrupted one: a later turn reads the same history.
	var tr api.Transcript
	if err := d.c.Do(context.Background(), http.MethodGet, "/v1/sessions/"+ap.SessionID+"/messages", nil, &tr); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range tr.Messages {
		if m.Role == "tool" && m.ToolCallID == ap.CallID {
			got = append(got, m.Text)
		}
	}
	if len(got) != 1 || strings.Contains(got[0], "not completed") {
		t.Fatalf("the call's stored results: %q", got)
	}
	// It says where it went on: a line kept with the conversation, and on
	// the stream a status of kind "resumed", which a window that follows
	// the run live keeps as a reload would show it.
	kept := false
	for _, m := range tr.Messages {
		kept = kept || (m.Role == "status" && m.Text == "Resumed: the call that waited for approval was allowed.")
	}
	if !kept {
		t.Fatalf("no Resumed line kept in the run's conversation: %+v", tr.Messages)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var st api.StatusEvent
	found := errors.New("found")
	err = api.NewClient(d.srv.URL, realToken, NewStreamHTTPClient()).Stream(ctx, ap.SessionID, "0", func(ev api.StreamEvent) error {
		if ev.Type == api.EventStatus && json.Unmarshal(ev.Data, &st) == nil && strings.HasPrefix(st.Text, "Resumed:") {
			return found
		}
		return nil
	})
	if !errors.Is(err, found) || st.Kind != "resumed" {
		t.Fatalf("the Resumed status on the stream: %+v %v", st, err)
	}
}

func countPending(in api.Inbox) int {
	n := 0
	for _, it := range in.Items {
		if it.Kind == "approval" && it.State == "pending" {
			n++
		}
	}
	return n
}

// TestAHeldApprovalStillExpiresAtItsDeadline: an approval left by a
// stopped process expires at its deadline in the restarted one; then it
// can no longer be allowed, and nothing runs.
func TestAHeldApprovalStillExpiresAtItsDeadline(t *testing.T) {
	d := newRestartDesk(t)
	// A one-off that has passed: it runs only when asked (Run now).
	start := time.Now()
	_, ap := d.runWaiting("keep.md", api.Task{Name: "Cleanup", Schedule: "at 2026-01-01 00:00", TimeZone: "UTC", Tools: []string{"delete_path"},
		ApprovalWaitMinutes: 30, Prompt: `[[tool delete_path {"path":"keep.md"}]]`}, start)
	d.stop()
	d.start()
	if it := d.item(ap.ID); it.State != "pending" {
		t.Fatalf("after the restart: %+v", it)
	}
	// The deadline passes (the service's clock).
	d.set(start.Add(31 * time.Minute))
	if err := d.svc.TickTasks(context.Background()); err != nil {
		t.Fatal(err)
	}
	if it := d.item(ap.ID); it.State != "expired" {
		t.Fatalf("at the deadline: %+v", it)
	}
	if err := d.runner.Approvals().Decide(ap.ID, gate.Once); err == nil {
		t.Fatal("an expired approval was allowed")
	}
	if _, err := os.Stat(filepath.Join(d.ws, "keep.md")); err != nil {
		t.Fatal("keep.md went")
	}
	// No process held the call when it expired: the desktop audits it as
	// expired all the same, once, even after another restart.
	d.waitAudit(ap, audit.ByExpired)
	d.stop()
	d.start()
	d.waitAudit(ap, audit.ByExpired)
}

// waitAudit waits for the audit row of an approval's call a stopped process
// left, decided by by (denied), and fails on a second decided row for it:
// the stopped process recorded only that it held the call.
func (d *restartDesk) waitAudit(ap api.InboxItem, by string) {
	d.t.Helper()
	var es, decided []audit.Entry
	testwait.Until(d.t, "the audit row of the call "+ap.CallID, 20*time.Second, func() bool {
		var err error
		es, err = d.runner.Audit().List(context.Background(), audit.Filter{ToolCallID: ap.CallID})
		decided = decided[:0]
		for _, e := range es {
			if e.Decision != audit.Held {
				decided = append(decided, e)
			}
		}
		return err == nil && len(decided) > 0
	})
	e := decided[0]
	if len(es) != 2 || es[0].Decision != audit.Held || len(decided) != 1 || e.Tool != ap.Call.Tool || e.Decision != audit.Denied ||
		e.DecidedBy != by || e.SessionID != ap.SessionID || e.Class != es[0].Class {
		d.t.Fatalf("audit of the call %s: %+v", ap.CallID, es)
	}
}

// TestADenyAfterARestartIsAudited: a call waits for approval; the process
// stops. Denied in the restarted process, the call is audited as the
// user's deny (once, even after another restart), the Inbox item shows it
// denied, and nothing runs.
func TestADenyAfterARestartIsAudited(t *testing.T) {
	d := newRestartDesk(t)
	task, ap := d.runWaiting("keep.md", api.Task{Name: "Cleanup", Schedule: "at 2026-01-01 00:00", TimeZone: "UTC", Tools: []string{"delete_path"},
		ApprovalWaitMinutes: 30, Prompt: `[[tool delete_path {"path":"keep.md"}]]`}, time.Now())
	d.stop()
	d.start()
	if err := d.runner.Approvals().Decide(ap.ID, gate.Refuse); err != nil {
		t.Fatal(err)
	}
	if it := d.item(ap.ID); it.State != "denied" {
		t.Fatalf("the denied approval: %+v", it)
	}
	d.waitAudit(ap, audit.ByUser)
	if err := d.runner.Approvals().Decide(ap.ID, gate.Refuse); err == nil {
		t.Fatal("a denied approval was denied twice")
	}
	d.stop()
	d.start()
	d.waitAudit(ap, audit.ByUser)
	if _, err := os.Stat(filepath.Join(d.ws, "keep.md")); err != nil {
		t.Fatal("keep.md went")
	}
	in, err := d.c.Inbox(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range in.Items {
		if it.TaskID == task.ID && it.Kind == "result" && it.RunID != ap.RunID {
			t.Fatalf("the task ran again after the deny: %+v", it)
		}
	}
}

// TestAStoppedRunWaitingForApprovalSaysSoInTheInbox: a task's call waits
// for approval and the process stops. The run's Inbox item does not call it
// a failure to retry by sending a message again (a task's run has no
// message to send): it says the run stopped with Jarvis and goes on from
// the call waiting in the Inbox once that is allowed.
func TestAStoppedRunWaitingForApprovalSaysSoInTheInbox(t *testing.T) {
	d := newRestartDesk(t)
	_, ap, ticked := d.tidyWaiting()
	d.stop()
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	d.start()
	in, err := d.c.Inbox(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	var stopped []api.InboxItem
	for _, it := range in.Items {
		if it.RunID == ap.RunID && it.Kind != "approval" {
			stopped = append(stopped, it)
		}
	}
	if len(stopped) != 1 {
		t.Fatalf("the stopped run's items: %+v", in.Items)
	}
	it := stopped[0]
	if it.Title != "Tidy stopped with Jarvis" || strings.Contains(it.Body, "send the message again") ||
		!strings.Contains(it.Body, "goes on from it once you allow it") {
		t.Fatalf("the stopped run's item says %q: %q", it.Title, it.Body)
	}
	// The run's conversation says the same, as a line of its own kind
	// (run_waiting), not "interrupted" with its "send the message again".
	conv, err := svc{d.c}.messages(context.Background(), ap.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	last := conv.Messages[len(conv.Messages)-1]
	if last.Role != "status" || string(last.Meta) != `{"code":"run_waiting","kind":"error"}` || last.Text != it.Body {
		t.Fatalf("the run's conversation ends with %+v (meta %s), want the run_waiting line %q", last, last.Meta, it.Body)
	}
}
