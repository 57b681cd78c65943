package app

// The Inbox in the window (and under --headless): calls of tasks' runs that
// wait for approval (package inbox) are announced to the service's Inbox
// with a desktop notification, and their outcome recorded there; the window
// lists the Inbox, decides approvals, marks items read or done.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/app/inbox"
	"jarvis/tools"
)

// followTaskRuns follows the sessions of tasks' runs in the window, as
// headless follows every session: their calls are judged by this gate (one
// needing approval waits in the Inbox) whether or not the session is open.
// Runs that existed when the window started are followed from their end.
func (a *App) followTaskRuns(poll time.Duration) {
	var atStart map[string]bool
	seen := ""
	for {
		if known, err := a.followAll(atStart, isTaskRun); err == nil && atStart == nil {
			atStart = known
		}
		// What the service added to the Inbox (results, answers that
		// arrived) reaches the window's unread count.
		if now := a.inboxMark(); now != seen {
			seen = now
			a.emit("inbox:changed", nil)
		}
		t := time.NewTimer(poll)
		select {
		case <-a.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// inboxMark sums up the Inbox's state (its newest item and unread count):
// a change means something to show.
func (a *App) inboxMark() string {
	ctx, cancel := a.reqCtx()
	defer cancel()
	in, err := a.c.Inbox(ctx, false)
	if err != nil {
		return ""
	}
	newest := ""
	if len(in.Items) > 0 {
		newest = in.Items[0].ID + in.Items[0].UpdatedAt
	}
	return fmt.Sprintf("%d %d %s", in.Unread, len(in.Items), newest)
}

// isTaskRun says whether a session is a task's run (the service marks it
// with the task's id).
func isTaskRun(s Session) bool {
	var attrs struct {
		TaskID string `json:"task_id"`
	}
	return len(s.Attributes) > 0 && json.Unmarshal(s.Attributes, &attrs) == nil && attrs.TaskID != ""
}

// watchApprovals announces each call that starts waiting and records each
// outcome, until the app shuts down.
func (a *App) watchApprovals() {
	if a.approvals == nil {
		return
	}
	a.approvals.UseService(a.c)          // `jarvis inbox` beside this process lists its Inbox
	a.approvals.HandleHeld(a.decideHeld) // approvals a stopped process left
	announced, audited := map[string]bool{}, map[string]bool{}
	sweep := time.NewTicker(heldSweep)
	defer sweep.Stop()
	a.auditExpiredHeld(audited)
	for {
		ch := a.approvals.Changed()
		for _, p := range a.approvals.Pending() {
			if announced[p.ID] {
				continue
			}
			announced[p.ID] = true
			a.announceApproval(p)
		}
		for _, p := range a.approvals.Drain() {
			delete(announced, p.ID)
			state := p.Outcome
			if state == "withdrawn" {
				// The service withdrew the call: it settles the item
				// itself (kept when it stops, withdrawn when the run ended).
				continue
			}
			ctx, cancel := a.reqCtx()
			if _, err := a.c.UpdateInbox(ctx, p.ID, api.InboxUpdate{State: &state}); err != nil {
				a.log.Warn("inbox: recording an approval's outcome", "item", p.ID, "err", err)
			}
			cancel()
		}
		a.emit("inbox:changed", nil)
		select {
		case <-ch:
		case <-sweep.C:
			a.auditExpiredHeld(audited)
		case <-a.ctx.Done():
			return
		}
	}
}

// heldSweep is how often the Inbox is looked at for approvals that expired
// while no process held their call.
const heldSweep = 2 * time.Second

// auditExpiredHeld audits, as expired, each approval that expired in the
// Inbox while no process held its call (the service expires it at its
// deadline): the process that held it recorded only that it held it.
// audited remembers the items settled here.
func (a *App) auditExpiredHeld(audited map[string]bool) {
	if a.gateLog() == nil {
		return
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	in, err := a.c.Inbox(ctx, true)
	if err != nil {
		return
	}
	for _, it := range in.Items {
		if it.Kind != "approval" || it.State != "expired" || it.Call == nil || it.CallID == "" || audited[it.ID] {
			continue
		}
		if a.approvals.AskedHere(it.ID) {
			audited[it.ID] = true // this process's gate audited it
			continue
		}
		deadline := it.Deadline
		if t, err := time.Parse(time.RFC3339Nano, it.Deadline); err == nil {
			deadline = t.Local().Format("Mon 2 Jan 15:04")
		}
		err := a.auditHeld(ctx, it, audit.ByExpired, "expired: it waited in the Inbox, held by no running Jarvis, and nobody decided before the task's deadline ("+deadline+")")
		if err != nil {
			a.log.Warn("inbox: auditing an expired approval", "item", it.ID, "err", err)
			continue
		}
		audited[it.ID] = true
	}
}

// gateLog is the audit log of this process's gate (the Runner's, which
// headless has without the window's audit panel); nil without one.
func (a *App) gateLog() *audit.Log {
	if r, ok := a.tools.(interface{ Audit() *audit.Log }); ok {
		return r.Audit()
	}
	return a.audit
}

// auditHeld records the decision on a call a stopped process left waiting
// in the Inbox (denied by the user, or expired): one row, unless the call
// has a decided row already (its "held" row is not one).
func (a *App) auditHeld(ctx context.Context, it api.InboxItem, by, reason string) error {
	log := a.gateLog()
	if log == nil {
		return errors.New("this Jarvis keeps no audit log")
	}
	es, err := log.List(ctx, audit.Filter{ToolCallID: it.CallID})
	if err != nil {
		return err
	}
	class := it.Call.Risk
	for _, e := range es {
		if e.Decision != audit.Held {
			return nil
		}
		class = e.Class
	}
	if class == "" {
		class = string(tools.Risky)
	}
	_, err = log.Append(context.WithoutCancel(ctx), audit.Entry{SessionID: it.SessionID, ToolCallID: it.CallID, Tool: it.Call.Tool,
		Arguments: it.Call.Arguments, Class: class, Decision: audit.Denied, DecidedBy: by, Reason: reason})
	return err
}

func (a *App) announceApproval(p inbox.Pending) {
	title := fmt.Sprintf("%s: waiting for your approval to %s", p.Task.TaskName, tools.Words(p.Prompt.Tool))
	var body strings.Builder
	for _, f := range p.Prompt.Decisive {
		fmt.Fprintf(&body, "%s: %s\n", f.Name, f.Value)
	}
	if p.Prompt.ModelReason != "" {
		fmt.Fprintf(&body, "The agent says: %s\n", p.Prompt.ModelReason)
	}
	fmt.Fprintf(&body, "Waits until %s; then denied.", p.Deadline.Local().Format("Mon 2 Jan 15:04"))
	ctx, cancel := a.reqCtx()
	defer cancel()
	if _, err := a.c.AddInbox(ctx, api.InboxItem{ID: p.ID, Kind: "approval", Title: title, Body: body.String(),
		SessionID: p.Prompt.SessionID, TaskID: p.Task.TaskID, RunID: p.Task.RunID, CallID: p.Prompt.ToolCallID,
		Call: &api.InboxCall{Tool: p.Prompt.Tool, Arguments: p.Prompt.Arguments, Risk: string(p.Prompt.Risk)}, Deadline: p.Deadline.UTC().Format(time.RFC3339Nano)}); err != nil {
		a.log.Warn("inbox: announcing an approval", "item", p.ID, "err", err)
	}
	if n, ok := a.tools.(userNotifier); ok {
		if err := n.NotifyUser(ctx, "Jarvis: approval needed", title); err != nil {
			a.log.Info("inbox: no desktop notification", "err", err)
		}
	}
}

// decideHeld decides an approval whose call was held by a process that
// stopped (the Inbox kept the call and its deadline): denied, it is
// audited as the user's deny and marked so; allowed, the call is allowed
// ahead in the Approvals (once, until its deadline) and the run that held
// it goes on from that call (the service resumes it; when it cannot, it
// starts the task again, which reaches that call without waiting).
func (a *App) decideHeld(id string, choice gate.Choice) error {
	c, q := a.c, a.approvals
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := c.Inbox(ctx, false)
	if err != nil {
		return friendly(err)
	}
	var it *api.InboxItem
	for i := range in.Items {
		if in.Items[i].ID == id {
			it = &in.Items[i]
		}
	}
	if it == nil || it.Kind != "approval" || it.State != "pending" || it.Call == nil || it.TaskID == "" {
		return inbox.ErrNoSuchApproval
	}
	state := "denied"
	if choice == gate.Refuse {
		if err := a.auditHeld(ctx, *it, audit.ByUser, "denied by the user in the Inbox, after the Jarvis that held the call stopped"); err != nil {
			return fmt.Errorf("the deny could not be recorded in the audit log, so the approval still waits: %w", err)
		}
	}
	if choice == gate.Once {
		deadline, err := time.Parse(time.RFC3339Nano, it.Deadline)
		if err != nil || !deadline.After(time.Now()) {
			return inbox.ErrNoSuchApproval // expired meanwhile
		}
		q.Predecide(it.TaskID, it.Call.Tool, it.Call.Arguments, deadline)
		state = "allowed"
	}
	if _, err := c.UpdateInbox(ctx, id, api.InboxUpdate{State: &state}); err != nil {
		return friendly(err)
	}
	if choice != gate.Once {
		return nil
	}
	if it.RunID == "" || it.CallID == "" {
		if _, err := c.RunTaskNow(ctx, it.TaskID); err != nil {
			return fmt.Errorf("allowed, but the task could not be run again: %w", friendly(err))
		}
		return nil
	}
	if _, err := c.ResumeTaskRun(ctx, it.RunID, it.CallID); err != nil {
		return fmt.Errorf("allowed, but the task's run could not go on: %w", friendly(err))
	}
	return nil
}

// Inbox lists the Inbox, newest first, with the unread count (done items
// too when all).
func (a *App) Inbox(all bool) (api.Inbox, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	in, err := a.c.Inbox(ctx, all)
	return in, friendly(err)
}

// InboxDecide answers a call waiting for approval: "allow" (this call) or
// "deny"; the task's run goes on at once.
func (a *App) InboxDecide(id, choice string) error {
	if a.approvals == nil {
		return errors.New("this window holds no approvals")
	}
	c := gate.Refuse
	switch choice {
	case "allow", "once":
		c = gate.Once
	case "deny":
	default:
		return fmt.Errorf("answer an approval with allow or deny, not %q", choice)
	}
	if err := a.approvals.Decide(id, c); err != nil {
		if errors.Is(err, inbox.ErrNoSuchApproval) {
			return errors.New("this approval is no longer waiting: it was decided, it expired, or its run ended")
		}
		return err
	}
	// Answered here, it is read: the unread count keeps only what waits
	// for the user's eyes.
	read := true
	ctx, cancel := a.reqCtx()
	defer cancel()
	if _, err := a.c.UpdateInbox(ctx, id, api.InboxUpdate{Read: &read}); err != nil {
		a.log.Warn("inbox: marking a decided approval read", "item", id, "err", err)
	}
	a.emit("inbox:changed", nil)
	return nil
}

// InboxMark marks an item read or done.
func (a *App) InboxMark(id string, read, done bool) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	u := api.InboxUpdate{}
	if read {
		u.Read = &read
	}
	if done {
		u.Done = &done
	}
	_, err := a.c.UpdateInbox(ctx, id, u)
	if err == nil {
		a.emit("inbox:changed", nil)
	}
	return friendly(err)
}

// RunTasksWhenClosed says whether the systemd user unit that runs tasks
// while the window is closed is installed.
func (a *App) RunTasksWhenClosed() bool {
	return a.unit != nil && inbox.Installed(*a.unit)
}

// SetRunTasksWhenClosed installs (on) or removes (off) the systemd user
// unit that runs `jarvis --headless` while the window is closed.
func (a *App) SetRunTasksWhenClosed(on bool) error {
	if a.unit == nil {
		return errors.New("this Jarvis cannot install a background service here")
	}
	if !on {
		return inbox.Uninstall(*a.unit)
	}
	path, err := inbox.Install(*a.unit)
	if err != nil {
		return fmt.Errorf("could not set up running tasks while Jarvis is closed: %w", err)
	}
	a.log.Info("tasks will run while the window is closed", "unit", path)
	return nil
}

// Tasks lists the scheduled tasks (their schedule and tools in words, their
// next run).
func (a *App) Tasks() ([]api.Task, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	ts, err := a.c.Tasks(ctx)
	if ts == nil {
		ts = []api.Task{}
	}
	return ts, friendly(err)
}

// SaveTask creates a task (no id) or changes one from the window's task
// form; the service checks it and answers with its schedule and tools in
// words and its next run.
func (a *App) SaveTask(t api.Task) (api.Task, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	out, err := a.c.PutTask(ctx, t)
	return out, friendly(err)
}

// DeleteTask removes a task (its past runs and their conversations stay).
func (a *App) DeleteTask(id string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	return friendly(a.c.DeleteTask(ctx, id))
}

// RunTaskNow runs a task at once ("Run now"); its outcome comes to the Inbox.
func (a *App) RunTaskNow(id string) (api.TaskRun, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	out, err := a.c.RunTaskNow(ctx, id)
	return out, friendly(err)
}

// PreviewSchedule says a schedule in words with its next three runs, for
// the task form (timeZone "" is the machine's).
func (a *App) PreviewSchedule(schedule, timeZone string) (api.TaskPreview, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	out, err := a.c.PreviewSchedule(ctx, schedule, timeZone)
	if out.NextRuns == nil {
		out.NextRuns = []string{}
	}
	return out, friendly(err)
}

// TaskTools lists the tools a task run by agent may be given, in words.
func (a *App) TaskTools(agent string) ([]api.TaskTool, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	out, err := a.c.TaskTools(ctx, agent)
	if out == nil {
		out = []api.TaskTool{}
	}
	return out, friendly(err)
}
