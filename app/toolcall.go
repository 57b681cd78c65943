package app

import (
	"context"
	"encoding/json"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/gate"
	"jarvis/tools"
)

// ToolDecision is the data of the "tool:decision" event and what a
// ToolRunner reports: the gate's verdict and, when allowed, the execution.
type ToolDecision struct {
	SessionID  string          `json:"sessionId"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"` // as run (edited or not)
	Edited     bool            `json:"edited,omitempty"`
	Class      string          `json:"class"`     // safe | risky | forbidden
	Decision   string          `json:"decision"`  // allowed | denied | withdrawn
	DecidedBy  string          `json:"decidedBy"` // policy | user | session | timeout | error
	Reason     string          `json:"reason,omitempty"`
	OK         bool            `json:"ok"`
	Result     string          `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationMS int64           `json:"durationMs"`
	// Untrusted is where the untrusted content in the conversation came
	// from when the call was asked for (shown on the card); Trust and
	// Origin, whether the desktop vouches for the result (provenance.go).
	Untrusted []api.Source `json:"untrusted,omitempty"`
	// Media are the images and audio of an MCP tool's result (the card
	// shows them; the service passes images to a model that reads them).
	Media  []api.Media `json:"media,omitempty"`
	Trust  string      `json:"trust,omitempty"`
	Origin *api.Source `json:"origin,omitempty"`
	// Redacted: secret values were removed from the result and error
	// before they were recorded or sent on (ToolRunnerOptions.Redact).
	Redacted bool `json:"redacted,omitempty"`
	// UserReason is what the user wrote when they denied the call ("Tell
	// the agent why"), sent on to the model with the denial.
	UserReason string `json:"userReason,omitempty"`
}

// ToolRunner takes one tool call through the safety gate, runs it when
// allowed, and records it in the audit log. It must fail closed: any error
// is a denial in the returned decision.
type ToolRunner interface {
	Run(ctx context.Context, sessionID string, call api.ToolCall) ToolDecision
}

// Prompts is the gate's queue of permission prompts (*gate.Prompter).
type Prompts interface {
	Changed() <-chan struct{}
	Pending() []gate.Prompt
	Answer(id string, a gate.Answer) error
}

// ResolvePrompt answers a permission prompt. choice is once, session,
// always or deny; editedArguments is a JSON object, or "" when unchanged.
func (a *App) ResolvePrompt(promptID, choice, editedArguments string) error {
	return a.ResolvePromptScoped(promptID, choice, editedArguments, 0)
}

// PendingPrompts returns the open permission prompts, oldest first.
func (a *App) PendingPrompts() []gate.Prompt {
	if a.prompts == nil {
		return []gate.Prompt{}
	}
	return a.prompts.Pending()
}

// watchPrompts emits "tool:prompts" with the whole queue on every change,
// so the window always shows exactly what waits for an answer.
func (a *App) watchPrompts() {
	if a.prompts == nil {
		return
	}
	for {
		ch := a.prompts.Changed()
		a.emit("tool:prompts", a.PendingPrompts())
		select {
		case <-ch:
		case <-a.ctx.Done():
			return
		}
	}
}

// senderOf names the agent of a session (its display name, else its id) for
// the notifications it sends; "" when the service cannot say.
func (a *App) senderOf(sessionID string) string {
	ctx, cancel := a.reqCtx()
	defer cancel()
	sess, err := a.s.session(ctx, sessionID)
	if err != nil || sess.AgentID == "" {
		return ""
	}
	if ags, err := a.s.agents(ctx); err == nil {
		for _, ag := range ags {
			if ag.AgentID == sess.AgentID && ag.DisplayName != "" {
				return ag.DisplayName
			}
		}
	}
	return sess.AgentID
}

// onToolRequest starts a tool call's lifecycle once per call id.
func (a *App) onToolRequest(sessionID string, ev api.StreamEvent) {
	var call api.ToolCall
	if err := json.Unmarshal(ev.Data, &call); err != nil || call.ID == "" {
		a.log.Warn("malformed tool.request", "session", sessionID, "event", ev.ID)
		return
	}
	a.mu.Lock()
	seen := a.handled[call.ID]
	a.handled[call.ID] = true
	a.mu.Unlock()
	if seen {
		return
	}
	ctx := a.track(call)
	a.calls.Add(1)
	go func() {
		defer a.calls.Done()
		defer a.untrack(call.ID)
		a.runTool(ctx, sessionID, call)
	}()
}

func (a *App) runTool(ctx context.Context, sessionID string, call api.ToolCall) {
	start := time.Now()
	var d ToolDecision
	if a.tools == nil {
		d = ToolDecision{SessionID: sessionID, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments, Class: "forbidden",
			Decision: "denied", DecidedBy: "error", Error: "denied: this window has no tool executor"}
	} else {
		if call.Name == "notify" {
			ctx = tools.WithSender(ctx, a.senderOf(sessionID))
		}
		d = a.tools.Run(ctx, sessionID, call)
	}
	d.SessionID, d.CallID, d.Tool = sessionID, call.ID, call.Name
	if d.DurationMS == 0 {
		d.DurationMS = time.Since(start).Milliseconds()
	}
	if d.Decision != "allowed" {
		d.OK = false
		if d.Error == "" {
			d.Error = "denied"
		}
	}
	a.emit("tool:decision", d)
	if d.Decision == audit.Withdrawn {
		return // the service answered the call itself; it awaits nothing
	}
	if d.Decision == audit.Held || (call.Task != nil && !d.OK && a.ctx.Err() != nil) {
		// A task's call cut off by this process stopping: no answer, so
		// that its approval stays in the Inbox for after the restart (the
		// run stops with the service).
		a.log.Info("a task's call is left to the Inbox: this process stops", "session", sessionID, "call", call.ID)
		return
	}
	tr := api.ToolResult{ID: call.ID, OK: d.OK, Result: d.Result, Trust: d.Trust, Origin: d.Origin, Redacted: d.Redacted, UserReason: d.UserReason, Media: d.Media}
	if !d.OK {
		e := d.Error
		tr.Error = &e
	}
	// Posting survives a closing window for a few seconds so the turn is
	// not left waiting for its timeout.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 10*time.Second)
	defer cancel()
	if err := a.c.PostToolResult(pctx, sessionID, tr); err != nil {
		a.log.Warn("posting tool result failed", "session", sessionID, "call", call.ID, "err", err)
		a.resultRefused(sessionID, call, d, err)
	}
}
