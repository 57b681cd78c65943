package chatrt

import (
	"context"
	"errors"

	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// Resuming a turn from its tool call: a task's run stopped with Jarvis
// while one of its calls waited for the user's approval; allowed after the
// restart, the run goes on from that call instead of starting again. The
// resumed turn (turn.Turn.ResumeCall) requests the same call again, under
// the same id (the desktop finds it allowed by the user's Inbox decision
// and audits it as the user's), stores its real result in place of the
// interrupted one, and the model loop goes on with the conversation so far.

// callIn says whether m is an assistant message that made the call id.
func callIn(m llm.Message, id string) bool {
	if m.Role != "assistant" {
		return false
	}
	for _, tc := range m.ToolCalls {
		if tc.ID == id {
			return true
		}
	}
	return false
}

// resumeCall runs the call t resumes from and puts its result in conv (and
// in the store) in place of the interrupted one. A non-nil outcome ends the
// turn.
func (rt *Runtime) resumeCall(ctx context.Context, t *turn.Turn, agent config.Agent, conv *convo) *turn.Outcome {
	bg := context.Background()
	var call llm.ToolCall
	at := -1
	if conv.cur < len(conv.entries) {
		for _, tc := range conv.entries[conv.cur].msg.ToolCalls {
			if tc.ID == t.ResumeCall {
				call = tc
			}
		}
		for i := conv.cur + 1; i < len(conv.entries) && conv.entries[i].msg.Role == "tool"; i++ {
			if conv.entries[i].msg.ToolCallID == t.ResumeCall {
				at = i
			}
		}
	}
	if call.ID == "" || at < 0 {
		out := turn.Failed("not_resumable", "The run could not go on: its conversation no longer holds the call that was allowed.")
		return &out
	}
	if _, err := t.Stored(); err != nil {
		return &turn.Outcome{} // never recorded: runTurn abandons the turn
	}
	if err := rt.env.Store.ReopenToolCall(bg, t.SessionID, call.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		out := turn.Failed("internal", "could not reopen the allowed call: %v", err)
		return &out
	}
	r := rt.runToolCalls(ctx, t, agent, []llm.ToolCall{call}, []string{call.ID})[0]
	content, images, meta := toolMessage(call.Name, r)
	id, err := rt.env.Store.SetToolResult(bg, t.SessionID, call.ID, content, meta)
	if errors.Is(err, store.ErrNotFound) { // its process died before storing any result
		var m store.Message
		m, err = rt.env.Store.AddMessage(bg, store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "tool", Content: content, ToolCallID: call.ID, Meta: meta})
		id = m.ID
	}
	if err != nil {
		rt.env.Log.Error("store tool message", "err", err)
	}
	conv.entries[at] = entryOf(llm.Message{Role: "tool", Content: content, ToolCallID: call.ID, Images: images}, id)
	if ctx.Err() != nil {
		out := turn.Failed("cancelled", "Stopped: the turn was cancelled.")
		return &out
	}
	return nil
}
