package acprt

// What an ACP agent is told when its turn starts a new ACP session: the
// conversation so far, from the store, for the summary acpagent puts in the
// new session's first prompt; and the status line that tells the user the
// agent's conversation started over.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"jarvis/service/acpagent"
	"jarvis/service/turn"
)

// acpMeta is what an ACP agent's reply keeps of its ACP session: after a
// restart of the service the next turn resumes that session with
// session/load (when the agent offers it and the instructions are the same).
type acpMeta struct {
	ACP struct {
		SessionID       string `json:"sessionId"`
		StopReason      string `json:"stopReason,omitempty"`
		InstructionsKey string `json:"instructionsKey,omitempty"`
	} `json:"acp"`
}

// lastACPSession is the ACP session of the Jarvis session's latest reply
// of an ACP agent (zero when there is none).
func (rt *Runtime) lastACPSession(sessionID string) acpagent.Resume {
	rows, err := rt.env.Store.Messages(context.Background(), sessionID)
	if err != nil {
		return acpagent.Resume{}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if m := rows[i]; m.Role == "assistant" && strings.Contains(m.Meta, `"acp"`) {
			var v acpMeta
			if json.Unmarshal([]byte(m.Meta), &v) == nil && v.ACP.SessionID != "" {
				return acpagent.Resume{SessionID: v.ACP.SessionID, InstructionsKey: v.ACP.InstructionsKey}
			}
		}
	}
	return acpagent.Resume{}
}

// history is the session's conversation before turn t, oldest first.
func (rt *Runtime) history(t *turn.Turn) []acpagent.Message {
	rows, err := rt.env.Store.Messages(context.Background(), t.SessionID)
	if err != nil {
		rt.env.Log.Error("acp: read the conversation for its summary", "err", err)
		return nil
	}
	var out []acpagent.Message
	for _, m := range rows {
		if m.TurnID != t.ID && (m.Role == "user" || m.Role == "assistant") {
			out = append(out, acpagent.Message{Role: m.Role, Content: m.Content})
		}
	}
	return out
}

// acpSessionNote is the status line of a turn that started a new ACP
// session in place of an earlier one ("" when it did not).
func acpSessionNote(name string, res acpagent.Result) string {
	var why string
	switch {
	case res.SessionLost:
		why = fmt.Sprintf("%s restarted and could not resume its conversation: this turn started a new one", name)
	case res.InstructionsChanged:
		why = fmt.Sprintf("%s's instructions changed: this turn started a new conversation with it", name)
	case res.Summarized > 0:
		why = fmt.Sprintf("%s was started anew (Jarvis or its settings changed) and does not have this conversation: this turn started a new one", name)
	default:
		return ""
	}
	if res.Summarized > 0 {
		return fmt.Sprintf("%s, given a short summary of the last %d messages", why, res.Summarized)
	}
	return why
}
