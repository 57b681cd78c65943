// Package inbox is the desktop's side of work that runs while you are away:
// a call of a scheduled task's run that needs your approval waits here
// (Approvals: no prompt in your face, no denial, no timeout) until you decide
// in the Inbox or the task's deadline passes (then denied, and audited as
// expired); and the Inbox this process keeps through its service (Service),
// which `jarvis inbox` beside it lists and acts on.
package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/app/gate"
)

type taskKey struct{}

// WithTask marks ctx as a tool call of a task's run: the Runner's asker
// then hands its prompt to Approvals instead of the window or headless.
func WithTask(ctx context.Context, t *api.TaskRef) context.Context {
	return context.WithValue(ctx, taskKey{}, t)
}

// TaskOf returns the task a call's ctx belongs to; nil for a conversation's.
func TaskOf(ctx context.Context) *api.TaskRef {
	t, _ := ctx.Value(taskKey{}).(*api.TaskRef)
	return t
}

// Pending is a call waiting for your approval.
type Pending struct {
	ID       string      `json:"id"` // the Inbox item's id
	Prompt   gate.Prompt `json:"prompt"`
	Task     api.TaskRef `json:"task"`
	Deadline time.Time   `json:"deadline"`
	Since    time.Time   `json:"since"`
	// Outcome once settled: allowed, denied or expired.
	Outcome string `json:"outcome,omitempty"`
}

// Service is where this process's Inbox is kept: the service it runs, or
// the one it is attached to (--service-url). *api.Client is one.
type Service interface {
	Inbox(ctx context.Context, all bool) (api.Inbox, error)
	UpdateInbox(ctx context.Context, id string, u api.InboxUpdate) (api.InboxItem, error)
}

type waiting struct {
	p  Pending
	ch chan gate.Answer
}

// Approvals holds the calls of tasks' runs waiting for your approval.
type Approvals struct {
	now func() time.Time

	mu      sync.Mutex
	waits   map[string]*waiting
	given   []given // decisions given ahead, after a restart (Predecide)
	held    func(id string, choice gate.Choice) error
	asked   map[string]bool // every id Ask parked in this process
	svc     Service
	settled []Pending // settled since the last Drain, for the Inbox's states
	changed chan struct{}
	closed  bool
}

// NewApprovals returns an empty queue; now is its clock (nil: time.Now).
func NewApprovals(now func() time.Time) *Approvals {
	if now == nil {
		now = time.Now
	}
	return &Approvals{now: now, waits: map[string]*waiting{}, asked: map[string]bool{}, changed: make(chan struct{})}
}

// ErrNoSuchApproval: nothing waits under that id (decided, expired, or never).
var ErrNoSuchApproval = errors.New("inbox: nothing waits for approval under that id")

// Ask parks p until Decide answers it, the task's deadline passes
// (gate.ErrExpired) or ctx ends: the service withdrew the call
// (gate.ErrWithdrawn), or this process stops (gate.ErrKept: the Inbox
// keeps the call for after the restart). The returned error follows
// gate.Asker.
func (q *Approvals) Ask(ctx context.Context, p gate.Prompt, task api.TaskRef) (gate.Answer, error) {
	deadline, err := time.Parse(time.RFC3339Nano, task.Deadline)
	if err != nil {
		return gate.Answer{Choice: gate.Refuse}, errors.New("the task's run has no valid approval deadline")
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return gate.Answer{Choice: gate.Refuse}, gate.ErrPromptClosed
	}
	if q.takeGiven(task.TaskID, p.Tool, p.Arguments) {
		q.mu.Unlock()
		return gate.Answer{Choice: gate.Once}, nil
	}
	id := "ap_" + p.ToolCallID
	p.ID, p.Deadline = id, deadline
	w := &waiting{p: Pending{ID: id, Prompt: p, Task: task, Deadline: deadline, Since: q.now()}, ch: make(chan gate.Answer, 1)}
	q.waits[id] = w
	q.asked[id] = true
	q.notify()
	q.mu.Unlock()

	timer := time.NewTimer(max(deadline.Sub(q.now()), 0))
	defer timer.Stop()
	select {
	case a := <-w.ch:
		return a, nil
	case <-timer.C:
		if q.settle(id, "expired") {
			return gate.Answer{Choice: gate.Refuse}, gate.ErrExpired
		}
		return <-w.ch, nil // decided at the last moment
	case <-ctx.Done():
		q.settle(id, "withdrawn")
		if cause := context.Cause(ctx); errors.Is(cause, gate.ErrWithdrawn) {
			return gate.Answer{Choice: gate.Refuse}, cause
		}
		// Not withdrawn by the service: this process stops, and the
		// Inbox keeps the call for after the restart.
		return gate.Answer{Choice: gate.Refuse}, gate.ErrKept
	}
}

// given is a decision given ahead for one call of a task's run.
type given struct {
	task, tool, args string
	until            time.Time
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// Predecide allows, once and until the deadline, the call (tool with these
// arguments) of a task's run: a call that waited for approval in a process
// that stopped, allowed after the restart; the task's run started again
// gets it without waiting again. Any other call waits as usual.
func (q *Approvals) Predecide(taskID, tool string, args []byte, until time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.given = append(q.given, given{task: taskID, tool: tool, args: compactJSON(args), until: until})
}

// takeGiven consumes a decision given ahead for this call; q.mu is held.
func (q *Approvals) takeGiven(taskID, tool string, args []byte) bool {
	now, a := q.now(), compactJSON(args)
	for i, g := range q.given {
		if g.task == taskID && g.tool == tool && g.args == a && now.Before(g.until) {
			q.given = slices.Delete(q.given, i, i+1)
			return true
		}
	}
	return false
}

// HandleHeld sets what Decide does with an id nothing in this process
// waits under: an approval whose call was held by a process that stopped
// (the Inbox kept it); f returns ErrNoSuchApproval when there is none.
func (q *Approvals) HandleHeld(f func(id string, choice gate.Choice) error) {
	q.mu.Lock()
	q.held = f
	q.mu.Unlock()
}

// AskedHere says whether id is a call that waited in this process: its
// outcome is audited by this process's gate, never as one a stopped
// process left.
func (q *Approvals) AskedHere(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.asked[id]
}

// UseService sets where this process's Inbox is kept (the App following
// the service does, at start).
func (q *Approvals) UseService(s Service) {
	q.mu.Lock()
	q.svc = s
	q.mu.Unlock()
}

// ErrNoService: this process does not follow a service yet.
var ErrNoService = errors.New("inbox: this Jarvis is not connected to its service yet")

// Service returns where this process's Inbox is kept; ErrNoService before
// UseService.
func (q *Approvals) Service() (Service, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.svc == nil {
		return nil, ErrNoService
	}
	return q.svc, nil
}

// settle takes id off the queue with an outcome; false if it was not there.
func (q *Approvals) settle(id, outcome string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.waits[id]
	if !ok {
		return false
	}
	delete(q.waits, id)
	w.p.Outcome = outcome
	q.settled = append(q.settled, w.p)
	q.notify()
	return true
}

// Decide answers a waiting call: once (allow this call) or deny.
func (q *Approvals) Decide(id string, choice gate.Choice) error {
	if choice != gate.Once && choice != gate.Refuse {
		return errors.New("an approval is answered with allow (once) or deny")
	}
	q.mu.Lock()
	w, ok := q.waits[id]
	if !ok {
		held := q.held
		q.mu.Unlock()
		if held != nil {
			return held(id, choice)
		}
		return ErrNoSuchApproval
	}
	delete(q.waits, id)
	w.p.Outcome = "allowed"
	if choice == gate.Refuse {
		w.p.Outcome = "denied"
	}
	q.settled = append(q.settled, w.p)
	w.ch <- gate.Answer{Choice: choice}
	q.notify()
	q.mu.Unlock()
	return nil
}

// Pending lists the waiting calls, oldest first.
func (q *Approvals) Pending() []Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Pending, 0, len(q.waits))
	for _, w := range q.waits {
		out = append(out, w.p)
	}
	slices.SortFunc(out, func(a, b Pending) int { return a.Since.Compare(b.Since) })
	return out
}

// Drain returns the calls settled since the last Drain.
func (q *Approvals) Drain() []Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.settled
	q.settled = nil
	return out
}

// Changed is closed at the next change.
func (q *Approvals) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// Close refuses new waits; the waiting ones are withdrawn by their callers.
func (q *Approvals) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

func (q *Approvals) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}
