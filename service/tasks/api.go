package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/tools"
)

// API serves the tasks and the Inbox: GET/POST /v1/tasks, PUT/DELETE
// /v1/tasks/{id}, GET /v1/tasks/{id}/runs, GET/POST /v1/inbox, PATCH
// /v1/inbox/{id}. It gets the store and the root's functions as fields.
type API struct {
	Store *store.Store
	Now   func() time.Time
	// CheckAgent says why an agent cannot run tasks ("" for the default).
	CheckAgent func(id string) error
	// Changed is called after a task is added, changed or removed.
	Changed func()
	// Tools lists the tools agent offers its model (a task's tools are
	// chosen among them).
	Tools func(agent string) ([]string, error)
	// RunNow runs a task at once (an *httpapi.Error when this process does
	// not run tasks).
	RunNow func(ctx context.Context, t api.Task) (store.RunRow, error)
	// Resume continues run from its call callID, allowed after the
	// process that held it stopped, or starts t again when it cannot.
	Resume  func(ctx context.Context, t api.Task, run store.RunRow, callID string) (api.TaskResume, error)
	MaxBody int64
}

// Routes are the API's routes, for the root's route table.
func (a *API) Routes() []turn.Route {
	return []turn.Route{
		{Pattern: "GET /v1/tasks", Handle: a.list},
		{Pattern: "POST /v1/tasks", Handle: a.create},
		{Pattern: "PUT /v1/tasks/{id}", Handle: a.update},
		{Pattern: "DELETE /v1/tasks/{id}", Handle: a.remove},
		{Pattern: "GET /v1/tasks/{id}/runs", Handle: a.runs},
		{Pattern: "POST /v1/tasks/{id}/run", Handle: a.runNow},
		{Pattern: "POST /v1/tasks/runs/{id}/resume", Handle: a.resume},
		{Pattern: "POST /v1/tasks/preview", Handle: a.preview},
		{Pattern: "GET /v1/tasks/tools", Handle: a.tools},
		{Pattern: "GET /v1/inbox", Handle: a.inbox},
		{Pattern: "POST /v1/inbox", Handle: a.addInbox},
		{Pattern: "PATCH /v1/inbox/{id}", Handle: a.patchInbox},
	}
}

// View is the stored task as the API shows it (its next run computed now).
func View(row store.TaskRow, now time.Time) (api.Task, error) {
	var t api.Task
	if err := json.Unmarshal([]byte(row.Spec), &t); err != nil {
		return t, err
	}
	t.ID, t.Source, t.CreatedAt = row.ID, row.Source, row.CreatedAt
	if s, err := Parse(t.Schedule, t.TimeZone); err == nil && !t.Disabled {
		settled, _ := time.Parse(time.RFC3339Nano, row.SettledUntil)
		from := settled
		if now.After(from) {
			from = now
		}
		if n := s.Next(from); !n.IsZero() {
			t.NextRun = n.Format(time.RFC3339)
		}
		t.ScheduleWords = s.Summary
	}
	t.Policy = Words(t.Tools)
	return t, nil
}

func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	rows, err := a.Store.Tasks(r.Context())
	if err != nil {
		return err
	}
	out := make([]api.Task, 0, len(rows))
	for _, row := range rows {
		if t, err := View(row, a.Now()); err == nil {
			out = append(out, t)
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"tasks": out})
}

// Save checks t and stores it (a new id when it has none); it is how the
// API, tasks.json and a conversation's task tool all add a task.
func (a *API) Save(ctx context.Context, t api.Task, source string) (api.Task, error) {
	n, _, err := Normalize(t)
	if err != nil {
		return t, httpapi.Errorf(http.StatusBadRequest, "invalid_task", "%s", err.Error())
	}
	if a.CheckAgent != nil {
		if err := a.CheckAgent(n.Agent); err != nil {
			return t, httpapi.Errorf(http.StatusBadRequest, "invalid_task", "task %q: %s", n.Name, err.Error())
		}
	}
	if n.ID == "" {
		n.ID = turn.NewID("task_")
	}
	n.Source = source
	spec := n
	spec.Policy, spec.ScheduleWords, spec.NextRun, spec.CreatedAt, spec.Source = "", "", "", "", ""
	b, err := json.Marshal(spec)
	if err != nil {
		return t, err
	}
	if err := a.Store.PutTask(ctx, store.TaskRow{ID: n.ID, Name: n.Name, Spec: string(b), Source: source}); err != nil {
		return t, err
	}
	if a.Changed != nil {
		a.Changed()
	}
	row, err := a.Store.Task(ctx, n.ID)
	if err != nil {
		return t, err
	}
	return View(row, a.Now())
}

func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	var t api.Task
	if err := httpapi.DecodeJSON(w, r, &t, a.MaxBody); err != nil {
		return err
	}
	t.ID = ""
	out, err := a.Save(r.Context(), t, "api")
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, out)
}

func (a *API) update(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	old, err := a.Store.Task(r.Context(), id)
	if err != nil {
		return notFound(err, id)
	}
	var t api.Task
	if err := httpapi.DecodeJSON(w, r, &t, a.MaxBody); err != nil {
		return err
	}
	if old.Source == "file" {
		return httpapi.Errorf(http.StatusConflict, "task_from_file", "task %q comes from tasks.json: change it there", old.Name)
	}
	var was api.Task
	if json.Unmarshal([]byte(old.Spec), &was) == nil && !sameTools(was.Tools, t.Tools) {
		// A task's tools are decided when it is created: a new set is a new task.
		return httpapi.Errorf(http.StatusConflict, "task_tools_fixed", "the tools of task %q were decided when it was created; create a new task to give it other tools", old.Name)
	}
	t.ID = id
	out, err := a.Save(r.Context(), t, old.Source)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

func sameTools(a, b []string) bool {
	x, y := sortedTools(a), sortedTools(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func notFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "task_not_found", "no task %q", id)
	}
	return err
}

func (a *API) remove(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if old, err := a.Store.Task(r.Context(), id); err == nil && old.Source == "file" {
		return httpapi.Errorf(http.StatusConflict, "task_from_file", "task %q comes from tasks.json: remove it there", old.Name)
	}
	if err := a.Store.DeleteTask(r.Context(), id); err != nil {
		return notFound(err, id)
	}
	if a.Changed != nil {
		a.Changed()
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

func (a *API) runs(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := a.Store.Task(r.Context(), id); err != nil {
		return notFound(err, id)
	}
	rows, err := a.Store.Runs(r.Context(), id, 100)
	if err != nil {
		return err
	}
	out := make([]api.TaskRun, 0, len(rows))
	for _, x := range rows {
		out = append(out, api.TaskRun{ID: x.ID, TaskID: x.TaskID, Occurrence: x.Occurrence, Status: x.Status, CaughtUp: x.CaughtUp,
			SessionID: x.SessionID, TurnID: x.TurnID, Summary: x.Summary, StartedAt: x.StartedAt, EndedAt: x.EndedAt})
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// PreviewCount is how many next occurrences a preview shows.
const PreviewCount = 3

// Preview is a schedule's next n occurrences after now.
func Preview(schedule, tz string, now time.Time, n int) (api.TaskPreview, error) {
	s, err := Parse(schedule, tz)
	if err != nil {
		return api.TaskPreview{}, err
	}
	out := api.TaskPreview{ScheduleWords: s.Summary, NextRuns: []string{}}
	for t := now; len(out.NextRuns) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out.NextRuns = append(out.NextRuns, t.In(s.loc).Format(time.RFC3339))
	}
	return out, nil
}

func (a *API) preview(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Schedule string `json:"schedule"`
		TimeZone string `json:"time_zone"`
	}
	if err := httpapi.DecodeJSON(w, r, &in, a.MaxBody); err != nil {
		return err
	}
	out, err := Preview(in.Schedule, in.TimeZone, a.Now(), PreviewCount)
	if err != nil {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_task", "%s", err.Error()).With("field", "schedule")
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// Usable says whether a task may be given the tool name (schedule_task
// never: a task does not make tasks).
func Usable(name string) bool {
	if name == "schedule_task" {
		return false
	}
	_, ok := tools.Lookup(name)
	return ok || strings.HasPrefix(name, "mcp__") || serviceTool(name)
}

func (a *API) tools(w http.ResponseWriter, r *http.Request) error {
	agent := r.URL.Query().Get("agent")
	if a.CheckAgent != nil {
		if err := a.CheckAgent(agent); err != nil {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_task", "%s", err.Error()).With("field", "agent")
		}
	}
	out := []api.TaskTool{}
	if a.Tools != nil {
		names, err := a.Tools(agent)
		if err != nil {
			return err
		}
		for _, n := range sortedTools(names) {
			if Usable(n) {
				out = append(out, api.TaskTool{Name: n, Words: tools.Words(n)})
			}
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"tools": out})
}

func (a *API) runNow(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	row, err := a.Store.Task(r.Context(), id)
	if err != nil {
		return notFound(err, id)
	}
	t, err := View(row, a.Now())
	if err != nil {
		return err
	}
	run, err := a.RunNow(r.Context(), t)
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Errorf(http.StatusConflict, "task_run_busy", "task %q was just run; try again in a moment", row.Name)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusAccepted, api.TaskRun{ID: run.ID, TaskID: run.TaskID, Occurrence: run.Occurrence, Status: run.Status,
		Summary: run.Summary, StartedAt: run.StartedAt})
}

func (a *API) resume(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		CallID string `json:"call_id"`
	}
	if err := httpapi.DecodeJSON(w, r, &body, a.MaxBody); err != nil {
		return err
	}
	if body.CallID == "" {
		return httpapi.Errorf(http.StatusBadRequest, "bad_request", "say which call was allowed (call_id)")
	}
	id := r.PathValue("id")
	run, err := a.Store.Run(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "task_not_found", "no task run %q", id)
	}
	if err != nil {
		return err
	}
	row, err := a.Store.Task(r.Context(), run.TaskID)
	if err != nil {
		return notFound(err, run.TaskID)
	}
	t, err := View(row, a.Now())
	if err != nil {
		return err
	}
	out, err := a.Resume(r.Context(), t, run, body.CallID)
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Errorf(http.StatusConflict, "task_run_busy", "task %q was just run; try again in a moment", row.Name)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusAccepted, out)
}

// Item is an Inbox row as the API shows it.
func Item(it store.InboxRow) api.InboxItem {
	state := it.State
	if it.Done {
		state = "done"
	}
	out := api.InboxItem{ID: it.ID, Kind: it.Kind, Title: it.Title, Body: it.Body, SessionID: it.SessionID, TaskID: it.TaskID,
		RunID: it.RunID, CallID: it.CallID, State: state, Read: it.Read, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	if it.Call != "" {
		var c api.InboxCall
		if json.Unmarshal([]byte(it.Call), &c) == nil {
			out.Call = &c
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, it.Deadline); err == nil {
		out.Deadline = t.Format(time.RFC3339Nano)
	}
	return out
}

func (a *API) inbox(w http.ResponseWriter, r *http.Request) error {
	rows, unread, err := a.Store.Inbox(r.Context(), r.URL.Query().Get("all") != "", 500)
	if err != nil {
		return err
	}
	out := api.Inbox{Items: make([]api.InboxItem, 0, len(rows)), Unread: unread}
	for _, it := range rows {
		out.Items = append(out.Items, Item(it))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

// addInbox is the desktop's: a call of a task's run waiting for approval.
func (a *API) addInbox(w http.ResponseWriter, r *http.Request) error {
	var it api.InboxItem
	if err := httpapi.DecodeJSON(w, r, &it, a.MaxBody); err != nil {
		return err
	}
	if it.Kind != "approval" {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_inbox_item", "only approvals are added from outside the service").With("field", "kind")
	}
	if it.Title == "" {
		return httpapi.Missing("title")
	}
	if it.ID == "" {
		it.ID = turn.NewID("in_")
	}
	row := store.InboxRow{ID: it.ID, Kind: it.Kind, Title: it.Title, Body: it.Body, SessionID: it.SessionID,
		TaskID: it.TaskID, RunID: it.RunID, CallID: it.CallID, State: "pending"}
	if it.Call != nil {
		if it.Call.Tool == "" || !json.Valid(it.Call.Arguments) {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_inbox_item", "an approval's call needs its tool and its arguments as JSON").With("field", "call")
		}
		b, _ := json.Marshal(it.Call)
		row.Call = string(b)
	}
	if it.Deadline != "" {
		d, err := time.Parse(time.RFC3339Nano, it.Deadline)
		if err != nil {
			return httpapi.Errorf(http.StatusBadRequest, "invalid_inbox_item", "the deadline %q is not a date and time (RFC 3339)", it.Deadline).With("field", "deadline")
		}
		row.Deadline = store.Timestamp(d)
	}
	row, err := a.Store.AddInbox(r.Context(), row)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, Item(row))
}

func (a *API) patchInbox(w http.ResponseWriter, r *http.Request) error {
	var u api.InboxUpdate
	if err := httpapi.DecodeJSON(w, r, &u, a.MaxBody); err != nil {
		return err
	}
	if u.State != nil {
		switch *u.State {
		case "pending", "allowed", "denied", "expired", "withdrawn", "open":
		default:
			return httpapi.Errorf(http.StatusBadRequest, "invalid_inbox_state", "an item's state is pending, allowed, denied, expired, withdrawn or open, not %q", *u.State).With("field", "state")
		}
	}
	row, err := a.Store.UpdateInbox(r.Context(), r.PathValue("id"), u.Read, u.Done, u.State, u.Body)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "inbox_item_not_found", "no Inbox item %q", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, Item(row))
}
