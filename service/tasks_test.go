package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
	"jarvis/service"
)

// fakeClock is the service's clock in the tasks' tests: time moves only when
// the test says (a night asleep is one call).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func withTasks(clock *fakeClock) envOpt {
	return func(e *env, o *service.Options) {
		o.Now, o.RunTasks, o.TaskLookEvery = clock.Now, true, time.Hour
	}
}

func (e *env) addTask(t api.Task) api.Task {
	e.t.Helper()
	out, err := e.c.PutTask(context.Background(), t)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) runs(taskID string) []api.TaskRun {
	e.t.Helper()
	var out struct{ Runs []api.TaskRun }
	if err := e.c.Do(context.Background(), "GET", "/v1/tasks/"+taskID+"/runs", nil, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Runs
}

func (e *env) inbox() api.Inbox {
	e.t.Helper()
	in, err := e.c.Inbox(context.Background(), false)
	if err != nil {
		e.t.Fatal(err)
	}
	return in
}

func (e *env) tick() {
	e.t.Helper()
	if err := e.svc.TickTasks(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// TestTaskEveryMinuteRunsAsItsOwnSessionWithOneInboxItem: an every-minute
// task runs at each minute of a fake clock, each run a session of its own
// whose answer is one Inbox item, newest first.
func TestTaskEveryMinuteRunsAsItsOwnSessionWithOneInboxItem(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC)}
	e := newEnv(t, withTasks(clock))
	task := e.addTask(api.Task{Name: "Notes digest", Prompt: "summarise yesterday's notes", Schedule: "every minute", TimeZone: "UTC", Tools: []string{}})
	if task.NextRun != "2026-06-01T10:01:00Z" || !strings.Contains(task.Policy, "no tools") || task.ScheduleWords != "every minute (UTC)" {
		t.Fatalf("task as stored: %+v", task)
	}
	e.tick()
	if n := len(e.runs(task.ID)); n != 0 {
		t.Fatalf("%d runs before the first minute", n)
	}
	clock.Set(time.Date(2026, 6, 1, 10, 1, 4, 0, time.UTC))
	e.tick()
	clock.Set(time.Date(2026, 6, 1, 10, 2, 1, 0, time.UTC))
	e.tick()
	runs := e.runs(task.ID)
	if len(runs) != 2 || runs[0].Occurrence != "2026-06-01T10:02:00.000000000Z" || runs[1].Occurrence != "2026-06-01T10:01:00.000000000Z" {
		t.Fatalf("runs: %+v", runs)
	}
	in := e.inbox()
	if len(in.Items) != 2 || in.Unread != 2 {
		t.Fatalf("inbox: %+v", in)
	}
	for i, it := range in.Items {
		if it.Kind != "result" || it.Body != "You said: summarise yesterday's notes" || it.SessionID != runs[i].SessionID || runs[i].Status != "done" {
			t.Fatalf("item %d: %+v (run %+v)", i, it, runs[i])
		}
	}
	if runs[0].SessionID == runs[1].SessionID {
		t.Fatal("two runs share a session")
	}
	// Marked read, then done: gone from the list, the unread count down.
	read, done := true, true
	if _, err := e.c.UpdateInbox(context.Background(), in.Items[1].ID, api.InboxUpdate{Read: &read, Done: &done}); err != nil {
		t.Fatal(err)
	}
	if in := e.inbox(); len(in.Items) != 1 || in.Unread != 1 {
		t.Fatalf("after marking one done: %+v", in)
	}
}

// TestMissedRunAfterSleepIsCaughtUpOnce: an hourly task whose machine slept
// three and a half hours runs once on waking ("once"), and not at all with
// "skip"; looking again runs nothing more.
func TestMissedRunAfterSleepIsCaughtUpOnce(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC)}
	e := newEnv(t, withTasks(clock))
	once := e.addTask(api.Task{Name: "Hourly", Prompt: "check", Schedule: "hourly", TimeZone: "UTC"})
	skip := e.addTask(api.Task{Name: "Hourly skip", Prompt: "check", Schedule: "hourly", TimeZone: "UTC", CatchUp: "skip"})
	clock.Set(time.Date(2026, 6, 1, 13, 30, 0, 0, time.UTC)) // woke up
	e.tick()
	e.tick()
	runs := e.runs(once.ID)
	if len(runs) != 1 || !runs[0].CaughtUp || runs[0].Occurrence != "2026-06-01T13:00:00.000000000Z" || runs[0].Status != "done" {
		t.Fatalf("once: %+v", runs)
	}
	if s := e.runs(skip.ID); len(s) != 1 || s[0].Status != "skipped" || s[0].SessionID != "" {
		t.Fatalf("skip: %+v", s)
	}
	in := e.inbox()
	if len(in.Items) != 1 || !strings.Contains(in.Items[0].Title, "caught up") {
		t.Fatalf("inbox: %+v", in)
	}
	clock.Set(time.Date(2026, 6, 1, 14, 0, 5, 0, time.UTC)) // on time again: both run
	e.tick()
	if a, b := e.runs(once.ID), e.runs(skip.ID); len(a) != 2 || len(b) != 2 || a[0].CaughtUp || b[0].Status != "done" {
		t.Fatalf("next hour: %+v / %+v", a, b)
	}
}

// TestTaskToolsBoundTheRun: a task allowed read_file never runs write_file
// even when its model asks (refused by the service, never sent to the
// desktop); its read_file call reaches the desktop marked as the task's,
// with its approval deadline.
func TestTaskToolsBoundTheRun(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC)}
	e := newEnv(t, withTasks(clock))
	task := e.addTask(api.Task{Name: "Reader", Schedule: "every minute", TimeZone: "UTC", Tools: []string{"read_file"}, ApprovalWaitMinutes: 90,
		Prompt: `[[tool write_file {"path":"a.txt","content":"x"}]] [[tool read_file {"path":"notes.md"}]]`})
	if !strings.Contains(task.Policy, "read files") || strings.Contains(task.Policy, "write") {
		t.Fatalf("policy in words: %q", task.Policy)
	}
	clock.Set(time.Date(2026, 6, 1, 10, 1, 1, 0, time.UTC))
	ticked := make(chan struct{})
	go func() { defer close(ticked); e.tick() }()
	var sid string
	testwait.Until(t, "the run's session", 10*time.Second, func() bool {
		if r := e.runs(task.ID); len(r) == 1 && r[0].SessionID != "" {
			sid = r[0].SessionID
			return true
		}
		return false
	})
	var evs collect
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.c.Stream(ctx, sid, "0", func(ev api.StreamEvent) error { evs.add(ev); return nil })
	var req api.ToolCall
	testwait.Until(t, "the read_file request", 10*time.Second, func() bool {
		for _, ev := range evs.all() {
			if ev.Type == api.EventToolRequest {
				req = decode[api.ToolCall](t, ev.Data)
				return true
			}
		}
		return false
	})
	if req.Name != "read_file" || req.Task == nil || req.Task.TaskID != task.ID || req.Task.Deadline != "2026-06-01T11:31:01Z" {
		t.Fatalf("the request: %+v task %+v", req, req.Task)
	}
	if err := e.c.PostToolResult(context.Background(), sid, api.ToolResult{ID: req.ID, OK: true, Result: "notes"}); err != nil {
		t.Fatal(err)
	}
	<-ticked
	var refused api.ToolResult
	requests := 0
	for _, ev := range evs.all() {
		switch ev.Type {
		case api.EventToolRequest:
			requests++
		case api.EventToolResult:
			if r := decode[api.ToolResult](t, ev.Data); r.Name == "write_file" {
				refused = r
			}
		}
	}
	if requests != 1 || !refused.Refused || refused.Error == nil || !strings.Contains(*refused.Error, "not allowed") {
		t.Fatalf("write_file: %d requests, result %+v", requests, refused)
	}
	if r := e.runs(task.ID); r[0].Status != "done" {
		t.Fatalf("run: %+v", r)
	}
}

// TestTasksRefuseBadInputInPlainWords: the API's errors say what is wrong.
func TestTasksRefuseBadInputInPlainWords(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		task api.Task
		want string
	}{
		{api.Task{Name: "x", Prompt: "p", Schedule: "whenever"}, "neither a known schedule"},
		{api.Task{Name: "x", Prompt: "p", Schedule: "hourly", Tools: []string{"format_disk"}}, `there is no tool "format_disk"`},
		{api.Task{Name: "x", Prompt: "p", Schedule: "hourly", CatchUp: "all"}, "run once"},
		{api.Task{Name: "x", Prompt: "p", Schedule: "hourly", Agent: "nobody"}, `no agent "nobody"`},
		{api.Task{Name: "x", Schedule: "hourly"}, "prompt is empty"},
	} {
		_, err := e.c.PutTask(context.Background(), c.task)
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != 400 || se.Err.Code != "invalid_task" || !strings.Contains(se.Err.Message, c.want) {
			t.Errorf("%+v: %v, want a 400 saying %q", c.task, err, c.want)
		}
	}
	task := e.addTask(api.Task{Name: "fixed", Prompt: "p", Schedule: "hourly", Tools: []string{"read_file"}})
	task.Tools = []string{"read_file", "write_file"}
	if _, err := e.c.PutTask(context.Background(), task); err == nil || !strings.Contains(err.Error(), "decided when it was created") {
		t.Fatalf("widening a task's tools: %v", err)
	}
}

// TestARestartWithdrawsTheApprovalsItsCallsHeld: an approval left pending by
// a process that stopped is marked withdrawn at the next start (the call it
// held ended with that process).
func TestARestartWithdrawsTheApprovalsItsCallsHeld(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC)}
	e := newEnv(t, withTasks(clock))
	it, err := e.c.AddInbox(context.Background(), api.InboxItem{Kind: "approval", Title: "Tidy: waiting for your approval to delete_path"})
	if err != nil || it.State != "pending" {
		t.Fatalf("%+v %v", it, err)
	}
	e.stop()
	e.start(withTasks(clock))
	in := e.inbox()
	if len(in.Items) != 1 || in.Items[0].ID != it.ID || in.Items[0].State != "withdrawn" {
		t.Fatalf("after a restart: %+v", in)
	}
}

// TestTaskFormRoutes: what the window's task form uses. A schedule's next
// three runs in its time zone (across Berlin's change to winter time), a bad
// schedule refused in plain words, the tools a task of the agent may be
// given (in words; never schedule_task), and "Run now": a run at once, its
// result in the Inbox, the schedule's own next run unchanged.
func TestTaskFormRoutes(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 10, 23, 9, 0, 0, 0, time.UTC)} // a Friday, 11:00 in Berlin
	e := newEnv(t, withTasks(clock))
	p, err := e.c.PreviewSchedule(ctx, "every weekday at 8:00", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-10-26T08:00:00+01:00", "2026-10-27T08:00:00+01:00", "2026-10-28T08:00:00+01:00"}
	if p.ScheduleWords != "every weekday (Monday to Friday) at 8:00 (Europe/Berlin)" || strings.Join(p.NextRuns, " ") != strings.Join(want, " ") {
		t.Fatalf("preview: %+v", p)
	}
	if p, err := e.c.PreviewSchedule(ctx, "at 2026-10-01 09:00", "UTC"); err != nil || len(p.NextRuns) != 0 {
		t.Fatalf("a one-off already past: %+v %v", p, err)
	}
	_, err = e.c.PreviewSchedule(ctx, "now and then", "")
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != 400 || se.Err.Code != "invalid_task" || !strings.Contains(se.Err.Message, "neither a known schedule") {
		t.Fatalf("bad schedule: %v", err)
	}

	tl, err := e.c.TaskTools(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]string{}
	for _, x := range tl {
		words[x.Name] = x.Words
	}
	if words["read_file"] != "read files in the workspace" || words["memory_search"] == "" {
		t.Fatalf("tools: %+v", tl)
	}
	if _, ok := words["schedule_task"]; ok {
		t.Fatal("a task is offered schedule_task")
	}
	if _, err := e.c.TaskTools(ctx, "nobody"); !errors.As(err, &se) || se.Status != 400 || !strings.Contains(se.Err.Message, `no agent "nobody"`) {
		t.Fatalf("tools of an unknown agent: %v", err)
	}

	task := e.addTask(api.Task{Name: "Digest", Prompt: "summarise", Schedule: "every weekday at 8:00", TimeZone: "Europe/Berlin", Tools: []string{}})
	run, err := e.c.RunTaskNow(ctx, task.ID)
	if err != nil || run.Status != "running" {
		t.Fatalf("run now: %+v %v", run, err)
	}
	e.tick() // waits for the runs started
	runs := e.runs(task.ID)
	if len(runs) != 1 || runs[0].ID != run.ID || runs[0].Status != "done" || runs[0].SessionID == "" {
		t.Fatalf("runs: %+v", runs)
	}
	if in := e.inbox(); len(in.Items) != 1 || in.Items[0].Body != "You said: summarise" || in.Items[0].RunID != run.ID {
		t.Fatalf("inbox: %+v", in)
	}
	ts, err := e.c.Tasks(ctx)
	if err != nil || len(ts) != 1 || ts[0].NextRun != "2026-10-26T07:00:00Z" {
		t.Fatalf("the schedule after run now: %+v %v", ts, err)
	}
	if _, err := e.c.RunTaskNow(ctx, "task_none"); !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("run now of no task: %v", err)
	}

	// A service that does not run tasks says so.
	plain := newEnv(t)
	other := plain.addTask(api.Task{Name: "Elsewhere", Prompt: "p", Schedule: "hourly"})
	if _, err := plain.c.RunTaskNow(ctx, other.ID); !errors.As(err, &se) || se.Status != 409 || se.Err.Code != "tasks_not_run_here" {
		t.Fatalf("run now where tasks do not run: %v", err)
	}
}

// TestAResumeThatCannotGoOnStartsTheTaskAgain: POST /v1/tasks/runs/{id}/resume
// on a run that ended (nothing of it waits) starts the task again, says why
// in the run's conversation, and refuses a request without a call or for
// no run.
func TestAResumeThatCannotGoOnStartsTheTaskAgain(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 10, 23, 9, 0, 0, 0, time.UTC)}
	e := newEnv(t, withTasks(clock))
	task := e.addTask(api.Task{Name: "Digest", Prompt: "summarise", Schedule: "every weekday at 8:00", TimeZone: "Europe/Berlin", Tools: []string{}})
	run, err := e.c.RunTaskNow(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.tick()
	var se *api.StatusError
	if _, err := e.c.ResumeTaskRun(ctx, run.ID, ""); !errors.As(err, &se) || se.Status != 400 || se.Err.Code != "bad_request" {
		t.Fatalf("resume without a call: %v", err)
	}
	if _, err := e.c.ResumeTaskRun(ctx, "run_none", "tc_x"); !errors.As(err, &se) || se.Status != 404 || se.Err.Code != "task_not_found" {
		t.Fatalf("resume of no run: %v", err)
	}
	clock.Set(clock.Now().Add(time.Minute)) // Run now takes the clock's moment as its occurrence
	out, err := e.c.ResumeTaskRun(ctx, run.ID, "tc_x")
	if err != nil || out.Resumed || out.Reason != "it had ended" || out.Run.ID == run.ID || out.Run.ID == "" {
		t.Fatalf("resume of an ended run: %+v %v", out, err)
	}
	e.tick()
	runs := e.runs(task.ID)
	if len(runs) != 2 || runs[0].ID != out.Run.ID || runs[0].Status != "done" {
		t.Fatalf("runs: %+v", runs)
	}
	tr := e.transcript(runs[1].SessionID)
	last := tr[len(tr)-1]
	if last.Role != "status" || !strings.Contains(last.Text, "could not go on from the allowed call (it had ended); the task was started again") {
		t.Fatalf("the ended run's conversation: %+v", tr)
	}
}
