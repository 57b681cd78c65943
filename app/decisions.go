package app

// The gate's decisions on a session's tool calls, read back from the audit
// log when the window loads a transcript: the service stores the calls and
// their results but not how the desktop decided, so without this a card
// allowed and a card denied look alike after a restart.

import (
	"jarvis/app/audit"
)

// CallDecision is how the gate decided one tool call (its newest audit row).
type CallDecision struct {
	ToolCallID   string `json:"toolCallId"`
	ProposedRisk string `json:"proposedRisk,omitempty"`
	Class        string `json:"class"`
	Decision     string `json:"decision"`
	DecidedBy    string `json:"decidedBy"`
	Reason       string `json:"reason,omitempty"`
	Edited       bool   `json:"edited,omitempty"`
}

// SessionDecisions returns the decision on each tool call of a session that
// the audit log recorded, one per call (the newest row wins: a call that ran
// but whose result the service no longer took says "withdrawn").
func (a *App) SessionDecisions(sessionID string) ([]CallDecision, error) {
	lg, err := a.auditLog()
	if err != nil || sessionID == "" {
		return []CallDecision{}, err
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	es, err := lg.List(ctx, audit.Filter{SessionID: sessionID, Limit: 10000})
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	out := []CallDecision{}
	for _, e := range es {
		if e.ToolCallID == "" {
			continue
		}
		d := CallDecision{ToolCallID: e.ToolCallID, ProposedRisk: e.ProposedRisk, Class: e.Class, Decision: e.Decision,
			DecidedBy: e.DecidedBy, Reason: e.Reason, Edited: len(e.EditedArguments) > 0}
		if i, ok := at[e.ToolCallID]; ok {
			out[i] = d
			continue
		}
		at[e.ToolCallID] = len(out)
		out = append(out, d)
	}
	return out, nil
}
