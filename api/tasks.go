package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// Task is a scheduled task (GET/POST /v1/tasks, tasks.json): a prompt run by
// an agent on a schedule, in its own session, with the tools decided when it
// was created.
type Task struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name"`
	Prompt string `json:"prompt"`
	// Agent runs the prompt (a chat agent); "" is the default agent.
	Agent string `json:"agent,omitempty"`
	// Schedule: "hourly", "every minute", "every weekday at 8:00", "every
	// Monday", "daily at 7:30", "at 2026-12-01 09:00" (once) or a five-field
	// cron expression; TimeZone names its zone ("" the machine's).
	Schedule string `json:"schedule"`
	TimeZone string `json:"time_zone,omitempty"`
	// CatchUp is what a missed occurrence becomes: "once" (default: run
	// once for the newest missed one) or "skip".
	CatchUp string `json:"catch_up,omitempty"`
	// Tools the task may use, fixed when it is created; none: words only.
	Tools []string `json:"tools"`
	// ApprovalWaitMinutes is how long a call waiting for your approval
	// waits before it is denied as expired (default 1440, a day).
	ApprovalWaitMinutes int  `json:"approval_wait_minutes,omitempty"`
	Disabled            bool `json:"disabled,omitempty"`

	// Set by the service.
	Source        string `json:"source,omitempty"` // api | file | conversation
	Policy        string `json:"policy,omitempty"` // the tools, in words
	ScheduleWords string `json:"schedule_words,omitempty"`
	NextRun       string `json:"next_run,omitempty"`
	CreatedAt     string `json:"created_at,omitempty"`
}

// TaskRef marks a tool call of a task's run (ToolCall.Task): the desktop
// holds a call that needs approval in the Inbox until you decide or the
// deadline passes, instead of prompting or denying it.
type TaskRef struct {
	TaskID   string   `json:"task_id"`
	TaskName string   `json:"task_name"`
	RunID    string   `json:"run_id"`
	Tools    []string `json:"tools"`
	Deadline string   `json:"deadline"` // RFC 3339
}

// TaskRun is one occurrence of a task.
type TaskRun struct {
	ID         string `json:"id"`
	TaskID     string `json:"task_id"`
	Occurrence string `json:"occurrence"`
	Status     string `json:"status"` // running | done | failed | skipped
	CaughtUp   bool   `json:"caught_up,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	TurnID     string `json:"turn_id,omitempty"`
	Summary    string `json:"summary,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
	EndedAt    string `json:"ended_at,omitempty"`
}

// InboxItem is one entry of the Inbox: a task's result or failure, a call
// waiting for approval, an answer that arrived while you were away.
type InboxItem struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"` // result | failure | approval | answer
	Title     string `json:"title"`
	Body      string `json:"body,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	// State: open, or for an approval pending | allowed | denied | expired;
	// done once marked done.
	State     string `json:"state"`
	Read      bool   `json:"read"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// Call is an approval's call, kept so that it outlives the process that
	// held it; Deadline (RFC 3339) is when it expires.
	Call     *InboxCall `json:"call,omitempty"`
	Deadline string     `json:"deadline,omitempty"`
}

// InboxCall is the call an approval holds.
type InboxCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Risk is the gate's class of the call, for the audit row of a
	// decision given after the process that held it stopped.
	Risk string `json:"risk,omitempty"`
}

// Inbox is GET /v1/inbox: newest first, and the unread count.
type Inbox struct {
	Items  []InboxItem `json:"items"`
	Unread int         `json:"unread"`
}

// InboxUpdate is PATCH /v1/inbox/{id}: any field set is applied.
type InboxUpdate struct {
	Read  *bool   `json:"read,omitempty"`
	Done  *bool   `json:"done,omitempty"`
	State *string `json:"state,omitempty"`
	Body  *string `json:"body,omitempty"`
}

// TaskPreview is POST /v1/tasks/preview's answer: a schedule in words and
// its next occurrences (RFC 3339, in the schedule's time zone).
type TaskPreview struct {
	ScheduleWords string   `json:"schedule_words"`
	NextRuns      []string `json:"next_runs"`
}

// TaskTool is a tool a task of an agent may be given, and what it lets the
// task do in words (GET /v1/tasks/tools).
type TaskTool struct {
	Name  string `json:"name"`
	Words string `json:"words"`
}

// PreviewSchedule calls POST /v1/tasks/preview.
func (c *Client) PreviewSchedule(ctx context.Context, schedule, timeZone string) (TaskPreview, error) {
	var out TaskPreview
	return out, c.Do(ctx, http.MethodPost, "/v1/tasks/preview", map[string]string{"schedule": schedule, "time_zone": timeZone}, &out)
}

// TaskTools calls GET /v1/tasks/tools: the tools a task run by agent may use.
func (c *Client) TaskTools(ctx context.Context, agent string) ([]TaskTool, error) {
	var out struct {
		Tools []TaskTool `json:"tools"`
	}
	return out.Tools, c.Do(ctx, http.MethodGet, "/v1/tasks/tools?agent="+url.QueryEscape(agent), nil, &out)
}

// RunTaskNow calls POST /v1/tasks/{id}/run: the task runs at once.
func (c *Client) RunTaskNow(ctx context.Context, id string) (TaskRun, error) {
	var out TaskRun
	return out, c.Do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(id)+"/run", nil, &out)
}

// TaskResume is the answer of POST /v1/tasks/runs/{id}/resume: the run
// goes on from its allowed call (Resumed), or, when it cannot (Reason says
// why, in words), the task was started again as Run.
type TaskResume struct {
	Resumed bool    `json:"resumed"`
	Reason  string  `json:"reason,omitempty"`
	Run     TaskRun `json:"run"`
}

// ResumeTaskRun calls POST /v1/tasks/runs/{id}/resume: a run that stopped
// with Jarvis while its call callID waited for approval goes on from that
// call, which the user has allowed.
func (c *Client) ResumeTaskRun(ctx context.Context, runID, callID string) (TaskResume, error) {
	var out TaskResume
	return out, c.Do(ctx, http.MethodPost, "/v1/tasks/runs/"+url.PathEscape(runID)+"/resume", map[string]string{"call_id": callID}, &out)
}

// Tasks calls GET /v1/tasks.
func (c *Client) Tasks(ctx context.Context) ([]Task, error) {
	var out struct {
		Tasks []Task `json:"tasks"`
	}
	return out.Tasks, c.Do(ctx, http.MethodGet, "/v1/tasks", nil, &out)
}

// PutTask calls POST /v1/tasks (a new task) or PUT /v1/tasks/{id}.
func (c *Client) PutTask(ctx context.Context, t Task) (Task, error) {
	var out Task
	if t.ID == "" {
		return out, c.Do(ctx, http.MethodPost, "/v1/tasks", t, &out)
	}
	return out, c.Do(ctx, http.MethodPut, "/v1/tasks/"+url.PathEscape(t.ID), t, &out)
}

// DeleteTask calls DELETE /v1/tasks/{id}.
func (c *Client) DeleteTask(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/tasks/"+url.PathEscape(id), nil, nil)
}

// Inbox calls GET /v1/inbox (done items too when all).
func (c *Client) Inbox(ctx context.Context, all bool) (Inbox, error) {
	var out Inbox
	p := "/v1/inbox"
	if all {
		p += "?all=1"
	}
	return out, c.Do(ctx, http.MethodGet, p, nil, &out)
}

// AddInbox calls POST /v1/inbox (the desktop's approvals).
func (c *Client) AddInbox(ctx context.Context, it InboxItem) (InboxItem, error) {
	var out InboxItem
	return out, c.Do(ctx, http.MethodPost, "/v1/inbox", it, &out)
}

// UpdateInbox calls PATCH /v1/inbox/{id}.
func (c *Client) UpdateInbox(ctx context.Context, id string, u InboxUpdate) (InboxItem, error) {
	var out InboxItem
	return out, c.Do(ctx, http.MethodPatch, "/v1/inbox/"+url.PathEscape(id), u, &out)
}
