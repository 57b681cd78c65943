package app

// Withdrawal: a prompt must not outlive its call. The service gives up on a
// tool call when its tool-result timeout passes, on POST /v1/chat/cancel
// (Stop), and when the turn ends for any other reason; it then publishes the
// call's tool.result itself (source "timeout" or "cancelled") and, at the
// end, the turn's assistant.final or error. The follower sees both, and the
// app cancels the call's context with gate.ErrWithdrawn: the Prompter takes
// the prompt off the queue (an answer that raced it is not honoured), the
// gate runs nothing and records the call as withdrawn. When the withdrawal
// arrives after the call already ran, POST /v1/tools/result is refused and
// that refusal is recorded too (resultRefused).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"jarvis/api"
	"jarvis/app/gate"
)

type inflightCall struct {
	turnID string
	cancel context.CancelCauseFunc
}

// track registers a call entering the gate and returns its context.
func (a *App) track(call api.ToolCall) context.Context {
	ctx, cancel := context.WithCancelCause(a.ctx)
	a.mu.Lock()
	a.inflight[call.ID] = inflightCall{turnID: call.TurnID, cancel: cancel}
	a.mu.Unlock()
	return ctx
}

// untrack forgets a call that left the gate.
func (a *App) untrack(id string) {
	a.mu.Lock()
	c, ok := a.inflight[id]
	delete(a.inflight, id)
	a.mu.Unlock()
	if ok {
		c.cancel(nil)
	}
}

// withdraw cancels the calls the service no longer waits for: the one with
// id, or (id "") every call of turnID.
func (a *App) withdraw(id, turnID string) {
	a.mu.Lock()
	var cancels []context.CancelCauseFunc
	for cid, c := range a.inflight {
		if (id != "" && cid == id) || (id == "" && turnID != "" && c.turnID == turnID) {
			cancels = append(cancels, c.cancel)
		}
	}
	a.mu.Unlock()
	for _, cancel := range cancels {
		cancel(gate.ErrWithdrawn)
	}
}

// onEvent is every event of a followed session, in order.
func (a *App) onEvent(sessionID string, ev api.StreamEvent) {
	switch ev.Type {
	case api.EventToolRequest:
		a.onToolRequest(sessionID, ev)
	case api.EventToolResult:
		var r api.ToolResult
		if json.Unmarshal(ev.Data, &r) != nil || r.ID == "" {
			break
		}
		if r.Source == "service" || r.Source == "agent" {
			a.recordService(sessionID, r)
			break
		}
		// The call has its result: the service answered it itself (timeout,
		// cancel), or another desktop did. Our own result comes back too,
		// once this gate is done with the call: withdrawing it then is a
		// no-op.
		a.withdraw(r.ID, "")
	case api.EventFinal, api.EventError:
		var end struct {
			TurnID string `json:"turn_id"`
		}
		if json.Unmarshal(ev.Data, &end) == nil && end.TurnID != "" {
			a.withdraw("", end.TurnID)
		}
	}
}

// resultRefused records a result the service would not take because it had
// stopped waiting for the call (409: tool_call_not_pending, or
// tool_result_duplicate when the service answered it itself on timeout or
// cancel; the desktop posts each result once): the call ran, but its result
// reached nobody.
func (a *App) resultRefused(sessionID string, call api.ToolCall, d ToolDecision, err error) {
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusConflict {
		return
	}
	if w, ok := a.tools.(interface {
		RecordUndelivered(ctx context.Context, sessionID string, call api.ToolCall, d ToolDecision)
	}); ok {
		w.RecordUndelivered(context.WithoutCancel(a.ctx), sessionID, call, d)
	}
}

// recordService records a tool the service ran (or refused) without a
// tool.request: every service-run call has its row in the audit chain. A
// call the gate judged (an outbound service tool) has its row already.
func (a *App) recordService(sessionID string, r api.ToolResult) {
	a.mu.Lock()
	judged := a.handled[r.ID]
	a.handled[r.ID] = true // a replayed event is recorded once
	a.mu.Unlock()
	if judged {
		return
	}
	if rec, ok := a.tools.(interface {
		RecordService(ctx context.Context, sessionID string, r api.ToolResult)
	}); ok {
		rec.RecordService(context.WithoutCancel(a.ctx), sessionID, r)
	}
}
