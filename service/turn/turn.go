// Package turn holds what every agent runtime shares: the running Turn it
// is handed, the Outcome it returns, the Runtime contract and the Env a
// runtime receives instead of the service. The turn lifecycle itself
// (claiming the session, storing the start, recording the end) is the
// root service's; runtimes only run the middle of a turn.
package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"jarvis/service/provenance"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/store"
)

// Turn is a running turn: what its runtime reads (the session, the
// message, the delegation chain) and reports (stats, usage, the end).
type Turn struct {
	ID        string
	SessionID string
	Cancel    context.CancelCauseFunc
	Done      chan struct{}
	// chain is the agents whose agents_message calls led to this turn,
	// oldest first, ending with this turn's agent; nil for a user's turn.
	Chain []string
	// Replaces is the turn this one is a new version of (Regenerate, Retry,
	// Edit: service/store/branches.go), or "".
	Replaces string
	// stats are the turn's tool calls and thinking, for agents_message (service/chatrt/delegate.go).
	Stats Stats
	// Taint is the untrusted sources in the model's context (service/provenance):
	// a result the desktop did not vouch for, another agent's reply or
	// delegated message, memory entries written after untrusted content, an
	// attachment, this turn's or earlier in the history (a summary keeps its
	// messages' sources). Every tool.request lists them; memory writes
	// record whether there were any (service/chatrt/memory.go).
	Taint provenance.Set
	// user is the message that started the turn; its id and time are set
	// once stored returns.
	User store.Message
	// stored waits until the turn's start is stored and returns the seq of
	// its user.message event; an error means the turn was never recorded
	// and must neither publish nor write anything.
	Stored func() (int64, error)
	// streamed is set when the request that started the turn streams it: its
	// deltas are published as they come even before that stream has
	// subscribed (it reads back what it missed).
	Streamed bool

	// usage is what the model server reported for the turn's requests
	// (chat runtime), stored with its end.
	Usage store.Usage
	// Window is the context window the chat runtime planned the turn for.
	Window int
	// sampled is the usage of completions run for the turn from outside its
	// runtime (an MCP server's sampling while one of its tool calls runs),
	// added to Usage when the turn ends (AddSampled, TakeSampled).
	sampledMu sync.Mutex
	sampled   store.Usage

	// Task is set on a scheduled task's run: its agent is narrowed to the
	// task's tools (service/tasks.Narrow), its tool calls carry it (the
	// desktop holds one needing approval in the Inbox) and wait until its
	// deadline instead of the tool-result timeout (ToolWait).
	Task *api.TaskRef
	// ResumeCall is set on a turn that continues an interrupted turn from
	// that turn's tool call of this id (a task's run whose held call was
	// allowed after a restart): it has no user message; its runtime
	// requests the call again, stores its real result in place of the
	// interrupted one, and goes on from there.
	ResumeCall string

	// Set before done is closed.
	Final string
	Fail  *api.ErrorEvent
}

// AddSampled counts a completion run for the turn beside its runtime (POST
// /v1/sessions/{id}/sample); safe while the runtime runs.
func (t *Turn) AddSampled(u store.Usage) {
	t.sampledMu.Lock()
	defer t.sampledMu.Unlock()
	t.sampled.Requests += u.Requests
	t.sampled.PromptTokens += u.PromptTokens
	t.sampled.CompletionTokens += u.CompletionTokens
}

// TakeSampled returns what AddSampled counted since the last call, and
// forgets it: the turn's end adds it to Usage once.
func (t *Turn) TakeSampled() store.Usage {
	t.sampledMu.Lock()
	defer t.sampledMu.Unlock()
	u := t.sampled
	t.sampled = store.Usage{}
	return u
}

// ToolWait is how long a tool call of t waits for the desktop: limit, or
// for a task's run until a minute past its approval deadline (the desktop
// denies a call still waiting then, as expired, and says so first).
func (t *Turn) ToolWait(limit time.Duration) time.Duration {
	if t.Task == nil {
		return limit
	}
	dl, err := time.Parse(time.RFC3339Nano, t.Task.Deadline)
	if err != nil {
		return limit
	}
	return max(time.Until(dl)+time.Minute, limit)
}

// Delegators is the agents whose agents_message calls started the turn:
// its chain without the turn's own agent, which ends it.
func (t *Turn) Delegators() []string {
	if len(t.Chain) < 2 {
		return nil
	}
	return t.Chain[:len(t.Chain)-1]
}

// Outcome is how a runtime ended a turn.
type Outcome struct {
	Final string          // the reply's whole text (when the turn succeeded)
	Tail  string          // text not yet published as a delta, published with the end
	Kind  string          // "status" when final is a status line, not a reply
	Last  *store.Message  // a message stored with the turn's end, or nil
	Fail  *api.ErrorEvent // set when the turn failed
}

// Failed is the Outcome of a turn that failed with code (an error event's).
func Failed(code, format string, args ...any) Outcome {
	return Outcome{Fail: &api.ErrorEvent{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// Stats collects what agents_message reports about a turn: its tool
// calls with their durations, and thinking text (CLI providers).
type Stats struct {
	mu       sync.Mutex
	tools    []api.DelegatedToolCall
	thinking strings.Builder
}

// AddTool records a tool call and how long it took.
func (st *Stats) AddTool(name string, d time.Duration) {
	st.mu.Lock()
	st.tools = append(st.tools, api.DelegatedToolCall{Name: name, DurationMs: d.Milliseconds()})
	st.mu.Unlock()
}

// AddThinking appends thinking text.
func (st *Stats) AddThinking(s string) {
	st.mu.Lock()
	st.thinking.WriteString(s)
	st.mu.Unlock()
}

// ToolCalls is how many tool calls the turn has made so far.
func (st *Stats) ToolCalls() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.tools)
}

// Snapshot returns the tool calls and thinking text so far.
func (st *Stats) Snapshot() ([]api.DelegatedToolCall, string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]api.DelegatedToolCall{}, st.tools...), st.thinking.String()
}

// Images reads a user message's attached images (data URLs) back from its
// meta ({"images": [...]}, as the chat route stores them); nil without.
func Images(meta string) []string {
	if !strings.Contains(meta, `"images"`) {
		return nil
	}
	var m struct {
		Images []string `json:"images"`
	}
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		return nil // not a message's images meta: no images
	}
	return m.Images
}
