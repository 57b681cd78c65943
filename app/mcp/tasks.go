package mcp

// Task-augmented tool calls (MCP 2025-11-25 "tasks"). go-sdk v1.8.0 has no
// client side for tasks and drops a tool's "execution" field, so the
// connection to a server is wrapped (taskConn, between go-sdk's client and
// its transport): it reads execution.taskSupport from tools/list answers,
// sends a call to a tool that requires a task as one ("task" in the
// params), follows the task (tasks/get: its status message becomes a
// progress notification of the call; tasks/result: its answer), and hands
// go-sdk the task's CallToolResult as the answer to the original request.
// go-sdk's notifications/cancelled for such a call (the user's Stop, the
// call's timeout) becomes tasks/cancel.
//
// Only stdio and legacy SSE connections are wrapped: go-sdk's Streamable
// HTTP connection learns the session's protocol version (and opens its
// event stream) through an unexported method a wrapper outside go-sdk
// cannot forward; a Streamable HTTP server's task calls are sent beside
// go-sdk's connection instead (taskhttp.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskTransport wraps a transport's connection in a taskConn.
type taskTransport struct {
	sdk.Transport
	s *server
}

func (t taskTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newTaskConn(c, t.s), nil
}

// Task polling bounds: a server's pollInterval is kept within them.
const (
	minTaskPoll = 200 * time.Millisecond
	maxTaskPoll = 5 * time.Second
)

// pollWait is how long to wait before asking for t's status again: the
// server's pollInterval within the bounds, else the longest.
func (t *taskStatus) pollWait() time.Duration {
	if t.PollInterval == nil {
		return maxTaskPoll
	}
	return min(max(time.Duration(*t.PollInterval)*time.Millisecond, minTaskPoll), maxTaskPoll)
}

// taskConn is a connection that runs calls to task-requiring tools as
// tasks (see the file comment).
type taskConn struct {
	inner sdk.Connection
	s     *server

	out       chan jsonrpc.Message // to go-sdk's reader
	closed    chan struct{}
	closeOnce sync.Once
	readErr   error // set before closed is closed by the pump
	pumpOnce  sync.Once
	seq       atomic.Int64

	mu      sync.Mutex
	lists   map[jsonrpc.ID]bool                   // tools/list requests waiting for their answer
	support map[string]string                     // tool name → execution.taskSupport
	calls   map[jsonrpc.ID]*taskCall              // calls sent as tasks, by go-sdk's request id
	own     map[jsonrpc.ID]chan *jsonrpc.Response // our own requests (tasks/*), waiting
	// early: status notifications of tasks not yet known (a server may
	// send one before the answer that creates the task), by task id.
	early map[string]*taskStatus
}

// maxEarly caps the status notifications kept for tasks not yet known.
const maxEarly = 64

// taskCall is one call sent as a task.
type taskCall struct {
	id     jsonrpc.ID
	tool   string
	token  any // the call's progress token; nil: none
	taskID string
	// cancelled: go-sdk gave the call up before the task was created; the
	// task is cancelled as soon as it is.
	cancelled bool
	stop      context.CancelFunc // ends the follower
	// last and steps: the status message last reported as progress, and
	// how many were.
	last  string
	steps float64
}

func newTaskConn(inner sdk.Connection, s *server) *taskConn {
	return &taskConn{inner: inner, s: s, out: make(chan jsonrpc.Message), closed: make(chan struct{}),
		lists: map[jsonrpc.ID]bool{}, support: map[string]string{}, calls: map[jsonrpc.ID]*taskCall{},
		own: map[jsonrpc.ID]chan *jsonrpc.Response{}, early: map[string]*taskStatus{}}
}

func (c *taskConn) SessionID() string { return c.inner.SessionID() }

func (c *taskConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	c.mu.Lock()
	for _, call := range c.calls {
		if call.stop != nil {
			call.stop()
		}
	}
	c.mu.Unlock()
	return c.inner.Close()
}

// Read gives go-sdk the server's messages, minus the answers that belong
// to the tasks, plus the answers of calls that ran as tasks.
func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.pumpOnce.Do(func() { go c.pump() })
	select {
	case m := <-c.out:
		return m, nil
	case <-c.closed:
		if c.readErr != nil {
			return nil, c.readErr
		}
		return nil, errors.New("connection closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands m to go-sdk's reader; false once the connection closed.
func (c *taskConn) deliver(m jsonrpc.Message) bool {
	select {
	case c.out <- m:
		return true
	case <-c.closed:
		return false
	}
}

// pump reads the server's messages until the connection ends.
func (c *taskConn) pump() {
	for {
		m, err := c.inner.Read(context.Background())
		if err != nil {
			c.closeOnce.Do(func() { c.readErr = err; close(c.closed) })
			return
		}
		if !c.received(m) {
			continue
		}
		if !c.deliver(m) {
			return
		}
	}
}

// received looks at a message from the server; false: it is the tasks'
// own and does not go to go-sdk.
func (c *taskConn) received(m jsonrpc.Message) bool {
	switch m := m.(type) {
	case *jsonrpc.Response:
		c.mu.Lock()
		if ch, ok := c.own[m.ID]; ok {
			delete(c.own, m.ID)
			c.mu.Unlock()
			ch <- m
			return false
		}
		if c.lists[m.ID] {
			delete(c.lists, m.ID)
			c.mu.Unlock()
			if m.Error == nil {
				c.listed(m.Result)
			}
			return true
		}
		call, ok := c.calls[m.ID]
		c.mu.Unlock()
		if !ok {
			return true
		}
		var created struct {
			Task *taskStatus `json:"task"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
			// Refused, or answered at once without a task: go-sdk
			// gets it as it is.
			c.forget(call.id)
			return true
		}
		c.started(call, created.Task)
		return false
	case *jsonrpc.Request:
		if m.Method != "notifications/tasks/status" {
			return true
		}
		// A task's status (go-sdk has no handler for it): progress of its
		// call, as tasks/get's answers are.
		var t taskStatus
		if json.Unmarshal(m.Params, &t) == nil {
			c.mu.Lock()
			var call *taskCall
			for _, x := range c.calls {
				if x.taskID != "" && x.taskID == t.TaskID {
					call = x
				}
			}
			if call == nil && t.TaskID != "" && len(c.calls) > 0 {
				if len(c.early) >= maxEarly {
					clear(c.early)
				}
				c.early[t.TaskID] = &t
			}
			c.mu.Unlock()
			if call != nil {
				c.report(call, &t)
			}
		}
		return false
	}
	return true
}

// listed records the taskSupport of each tool of a tools/list answer.
func (c *taskConn) listed(result json.RawMessage) {
	support, _, err := toolsTaskSupport(result)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, ts := range support {
		if ts != "" {
			c.support[name] = ts
		} else {
			delete(c.support, name)
		}
	}
}

// toolsTaskSupport reads a tools/list answer: each tool's taskSupport
// ("" for a tool that says none) and the next page's cursor.
func toolsTaskSupport(raw json.RawMessage) (support map[string]string, next string, err error) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, "", err
	}
	support = make(map[string]string, len(r.Tools))
	for _, t := range r.Tools {
		support[t.Name] = ""
		if t.Execution != nil {
			support[t.Name] = t.Execution.TaskSupport
		}
	}
	return support, r.NextCursor, nil
}

// Write sends go-sdk's messages, a call to a task-requiring tool as a task
// and a cancellation of such a call as tasks/cancel.
func (c *taskConn) Write(ctx context.Context, m jsonrpc.Message) error {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return c.inner.Write(ctx, m)
	}
	switch {
	case req.Method == "tools/list" && req.IsCall():
		c.mu.Lock()
		c.lists[req.ID] = true
		c.mu.Unlock()
	case req.Method == "tools/call" && req.IsCall():
		if r, ok := c.asTask(req); ok {
			return c.inner.Write(ctx, r)
		}
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && c.cancel(id) {
				return nil
			}
		}
	}
	return c.inner.Write(ctx, m)
}

// asTask is req sent as a task, when its tool requires one.
func (c *taskConn) asTask(req *jsonrpc.Request) (*jsonrpc.Request, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, false
	}
	var name string
	_ = json.Unmarshal(p["name"], &name)
	c.mu.Lock()
	need := c.support[name] == "required"
	c.mu.Unlock()
	if !need {
		return nil, false
	}
	call := &taskCall{id: req.ID, tool: name}
	var meta struct {
		ProgressToken any `json:"progressToken"`
	}
	if raw, ok := p["_meta"]; ok && json.Unmarshal(raw, &meta) == nil {
		call.token = meta.ProgressToken
	}
	p["task"] = json.RawMessage(`{}`)
	params, err := json.Marshal(p)
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	c.calls[req.ID] = call
	c.mu.Unlock()
	return &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: params, Extra: req.Extra}, true
}

// forget drops a call's record.
func (c *taskConn) forget(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// taskStatus is the task object of the spec (CreateTaskResult.task and
// tasks/get's answer).
type taskStatus struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"` // milliseconds
}

// terminal says whether a task's status is final.
func (t *taskStatus) terminal() bool {
	switch t.Status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

// started follows a created task until its result, which goes to go-sdk
// as the answer to the call.
func (c *taskConn) started(call *taskCall, t *taskStatus) {
	ctx, stop := context.WithCancel(context.Background())
	c.mu.Lock()
	call.taskID, call.stop = t.TaskID, stop
	cancelled := call.cancelled
	if e := c.early[t.TaskID]; e != nil {
		delete(c.early, t.TaskID)
		if e.StatusMessage != "" {
			e.PollInterval = t.PollInterval
			t = e // newer than the task's creation
		}
	}
	c.mu.Unlock()
	c.s.m.log.Info("mcp: tool call runs as a task", "server", c.s.cfg.Name, "tool", call.tool, "task", t.TaskID)
	if cancelled {
		go c.cancelTask(call)
		return
	}
	go c.follow(ctx, call, t)
}

// follow reports the task's status messages as progress (from tasks/get,
// besides the status notifications a server may send) while tasks/result
// waits for its end, then hands go-sdk the result.
func (c *taskConn) follow(ctx context.Context, call *taskCall, t *taskStatus) {
	defer c.forget(call.id)
	type answer struct {
		r   *jsonrpc.Response
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := c.request(ctx, "tasks/result", map[string]string{"taskId": call.taskID})
		done <- answer{r, err}
	}()
	report := func(t *taskStatus) { c.report(call, t) }
	report(t)
	for {
		wait := t.pollWait()
		select {
		case a := <-done:
			if a.err != nil {
				if ctx.Err() != nil {
					return // cancelled: go-sdk has given the call up
				}
				a.r = &jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task's result could not be read: " + a.err.Error()}}
			}
			a.r.ID = call.id
			c.deliver(a.r)
			return
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		r, err := c.request(ctx, "tasks/get", map[string]string{"taskId": call.taskID})
		if err != nil || r.Error != nil {
			continue // tasks/result still answers
		}
		var now taskStatus
		if json.Unmarshal(r.Result, &now) == nil {
			t = &now
			report(t)
		}
	}
}

// report hands go-sdk a task's new status message as a progress
// notification of its call (the call's progress token).
func (c *taskConn) report(call *taskCall, t *taskStatus) {
	c.mu.Lock()
	if call.token == nil || t.StatusMessage == "" || t.StatusMessage == call.last {
		c.mu.Unlock()
		return
	}
	call.last = t.StatusMessage
	call.steps++
	steps := call.steps
	c.mu.Unlock()
	params, _ := json.Marshal(map[string]any{"progressToken": call.token, "progress": steps, "message": t.StatusMessage})
	c.deliver(&jsonrpc.Request{Method: "notifications/progress", Params: params})
}

// cancel turns go-sdk's cancellation of a task call into tasks/cancel;
// false: id is not a task call.
func (c *taskConn) cancel(id jsonrpc.ID) bool {
	c.mu.Lock()
	call, ok := c.calls[id]
	if ok {
		call.cancelled = true
	}
	started := ok && call.taskID != ""
	c.mu.Unlock()
	if !ok {
		return false
	}
	if started {
		go c.cancelTask(call)
	}
	return true
}

// cancelTask asks the server to cancel call's task and stops following it.
func (c *taskConn) cancelTask(call *taskCall) {
	if call.stop != nil {
		call.stop()
	}
	c.forget(call.id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.request(ctx, "tasks/cancel", map[string]string{"taskId": call.taskID})
	switch {
	case err != nil:
		c.s.m.log.Warn("mcp: cancelling a task failed", "server", c.s.cfg.Name, "tool", call.tool, "task", call.taskID, "err", err)
	case r.Error != nil:
		c.s.m.log.Warn("mcp: the server refused to cancel a task", "server", c.s.cfg.Name, "tool", call.tool, "task", call.taskID, "err", r.Error)
	default:
		var t taskStatus
		_ = json.Unmarshal(r.Result, &t)
		c.s.m.log.Info("mcp: task cancelled", "server", c.s.cfg.Name, "tool", call.tool, "task", call.taskID, "status", t.Status)
	}
}

// request sends one of the tasks' own requests and waits for its answer.
func (c *taskConn) request(ctx context.Context, method string, params any) (*jsonrpc.Response, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(fmt.Sprintf("jarvis-task-%d", c.seq.Add(1)))
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.own[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.own, id)
		c.mu.Unlock()
	}()
	if err := c.inner.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, errors.New("the connection closed")
	}
}
