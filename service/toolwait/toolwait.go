// Package toolwait pauses a turn on a tool call until the desktop posts its
// result (POST /v1/tools/result): the chat runtime's tool calls and the ACP
// runtime's requests both wait here. A call is stored and announced as a
// tool.request; the desktop's result, the tool-result timeout (denied: fail
// closed) or the turn's end (cancelled) settles it, whichever comes first,
// and exactly one of them is recorded.
package toolwait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// Result is a settled call: its position in its model step and its result.
type Result struct {
	Idx int
	R   api.ToolResult
}

// Wait is a tool call waiting for the desktop's result.
type Wait struct {
	id        string
	sessionID string
	idx       int  // position of the call in its model step
	resolved  bool // a result (or the service itself) has claimed this call; guarded by Waiter.mu
	ch        chan<- Result
}

// Waiter holds the pending waits of every session.
type Waiter struct {
	env   turn.Env
	mu    sync.Mutex
	waits map[string]*Wait // tool call id → pending wait
}

// New returns a Waiter that stores calls in env.Store and publishes on env.Publisher.
func New(env turn.Env) *Waiter { return &Waiter{env: env, waits: map[string]*Wait{}} }

// Request stores call (its id is the wire id the desktop sees), announces it
// with a tool.request and registers the wait; its result goes to ch with idx.
func (w *Waiter) Request(t *turn.Turn, call store.ToolCall, req api.ToolCall, idx int, ch chan<- Result) *Wait {
	wt := &Wait{id: call.ID, sessionID: t.SessionID, idx: idx, ch: ch}
	if err := w.env.Store.CreateToolCall(context.Background(), call); err != nil {
		w.env.Log.Error("store tool call", "err", err)
	}
	w.mu.Lock()
	w.waits[call.ID] = wt
	w.mu.Unlock()
	w.env.Publisher.Publish(t.SessionID, api.EventToolRequest, req)
	return wt
}

// Expire answers a pending call itself (status "timeout" or "cancelled")
// unless the desktop's result claimed it first (ok false: that result is
// on its way to the wait's channel).
func (w *Waiter) Expire(wt *Wait, status, msg string) (api.ToolResult, bool) {
	w.mu.Lock()
	if wt.resolved {
		w.mu.Unlock()
		return api.ToolResult{}, false
	}
	wt.resolved = true
	delete(w.waits, wt.id)
	w.mu.Unlock()
	if err := w.env.Store.ResolveToolCall(context.Background(), wt.sessionID, wt.id, status, false, "", msg); err != nil {
		w.env.Log.Error("resolve tool call", "id", wt.id, "err", err)
	}
	return api.ToolResult{OK: false, Error: &msg, Source: status}, true
}

// TimeoutMessage is the error of a call that got no result within limit.
func TimeoutMessage(limit time.Duration) string {
	return fmt.Sprintf("denied: no decision from the desktop within %s (fail closed)", limit)
}

// CancelledMessage is the error of a call whose turn was stopped.
const CancelledMessage = "cancelled: the turn was stopped"

// Deliver hands the desktop's result to the waiting turn.
func (w *Waiter) Deliver(ctx context.Context, sessionID string, r api.ToolResult) error {
	w.mu.Lock()
	wt, ok := w.waits[r.ID]
	if !ok || wt.sessionID != sessionID {
		w.mu.Unlock()
		// Not waiting: unknown, another session's, or already answered.
		err := w.env.Store.ResolveToolCall(ctx, sessionID, r.ID, "late", r.OK, "", "")
		switch {
		case errors.Is(err, store.ErrNotFound):
			return httpapi.Errorf(http.StatusNotFound, "tool_call_not_found", "no tool call %q in session %s", r.ID, sessionID)
		case errors.Is(err, store.ErrConflict):
			return httpapi.Errorf(http.StatusConflict, "tool_result_duplicate", "tool call %q already has a result", r.ID)
		case err != nil:
			return err
		}
		return httpapi.Errorf(http.StatusConflict, "tool_call_not_pending", "tool call %q is no longer awaited", r.ID)
	}
	if wt.resolved {
		w.mu.Unlock()
		return httpapi.Errorf(http.StatusConflict, "tool_result_duplicate", "tool call %q already has a result", r.ID)
	}
	wt.resolved = true
	delete(w.waits, r.ID)
	w.mu.Unlock()
	errText := ""
	if r.Error != nil {
		errText = *r.Error
	}
	if err := w.env.Store.ResolveToolCall(ctx, sessionID, r.ID, "done", r.OK, r.Result, errText); err != nil {
		w.env.Log.Error("resolve tool call", "id", r.ID, "err", err)
	}
	r.Source = "desktop"
	wt.ch <- Result{Idx: wt.idx, R: r}
	return nil
}

// Ask sends one tool.request for turn t and waits for the desktop's
// result, the tool-result timeout (denied: fail closed) or ctx's end
// (cancelled), as a model's tool calls do; the result is published as a
// tool.result.
func (w *Waiter) Ask(ctx context.Context, t *turn.Turn, name string, args json.RawMessage, risk, reason, source, target string) api.ToolResult {
	id := turn.NewID("tc_")
	ch := make(chan Result, 1)
	wt := w.Request(t, store.ToolCall{ID: id, SessionID: t.SessionID, TurnID: t.ID, Name: name, Arguments: string(args), Risk: risk, Reason: reason},
		api.ToolCall{ID: id, Name: name, Arguments: args, Risk: risk, Reason: reason, TurnID: t.ID, Source: source, Target: target, DelegatedBy: t.Delegators(), Task: t.Task,
			Untrusted: t.Taint.List()}, 0, ch)
	limit := t.ToolWait(w.env.Config().ToolResultTimeout())
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var r api.ToolResult
	settle := func(status, msg string) {
		if er, ok := w.Expire(wt, status, msg); ok {
			r = er
		} else {
			r = (<-ch).R
		}
	}
	select {
	case ir := <-ch:
		r = ir.R
	case <-timer.C:
		settle("timeout", TimeoutMessage(limit))
	case <-ctx.Done():
		settle("cancelled", CancelledMessage)
	}
	r.ID, r.TurnID = id, t.ID
	w.env.Publisher.Publish(t.SessionID, api.EventToolResult, r)
	return r
}
