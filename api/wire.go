// Package api holds the wire types of the General Agent Service's HTTP API
// (what crosses HTTP, with the field names of seed 004) and a typed Go client
// for it, shared by the desktop app, the tests and the benchmarks.
//
// It imports nothing of the service, so the desktop depends on the API, not
// on the implementation.
package api

import "encoding/json"

// Event types on a session stream. The first five are seed 004's.
const (
	EventDelta       = "assistant.delta"
	EventFinal       = "assistant.final"
	EventToolRequest = "tool.request"
	EventToolResult  = "tool.result"
	EventError       = "error"
	EventUserMessage = "user.message" // a user message was accepted (shown to other clients)
	EventStatus      = "status"       // a status line ("sent to external agent", "forward failed", ...)
	EventReset       = "stream.reset" // Last-Event-ID was unknown: the client must reload the transcript
)

// ErrorBody is the body of every non-2xx response.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error is the error envelope of seed 004.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Health is GET /health.
type Health struct {
	Healthy  bool   `json:"healthy"`
	Version  string `json:"version"`
	UptimeMs int64  `json:"uptime_ms"`
}

// CreateSessionRequest is POST /v1/sessions.
type CreateSessionRequest struct {
	JarvisSessionID    string `json:"jarvis_session_id"`
	PreferredSessionID string `json:"preferred_session_id,omitempty"`
	AgentID            string `json:"agent_id,omitempty"` // extension: the agent of a new session (default "general")
}

// CreateSessionResponse answers POST /v1/sessions.
type CreateSessionResponse struct {
	GeneralSessionID string `json:"general_session_id"`
	Created          bool   `json:"created"` // extension: false when an existing session was resumed
}

// MessagePart is one part of a message.
type MessagePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Message is a list of parts.
type Message struct {
	Parts []MessagePart `json:"parts"`
}

// Text joins the text parts.
func (m Message) Text() string {
	s := ""
	for _, p := range m.Parts {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s
}

// ChatRequest is POST /v1/chat.
type ChatRequest struct {
	GeneralSessionID string  `json:"general_session_id"`
	Mode             string  `json:"mode,omitempty"`
	Message          Message `json:"message"`
	Stream           bool    `json:"stream"`
}

// ChatResponse answers POST /v1/chat with stream=false.
type ChatResponse struct {
	Assistant Message `json:"assistant"`
	TurnID    string  `json:"turn_id,omitempty"`
}

// CancelRequest is POST /v1/chat/cancel.
type CancelRequest struct {
	GeneralSessionID string `json:"general_session_id"`
}

// CancelResponse answers POST /v1/chat/cancel.
type CancelResponse struct {
	Cancelled bool   `json:"cancelled"`
	TurnID    string `json:"turn_id,omitempty"`
}

// ToolCall is a tool.request event: the service asks the desktop to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Risk      string          `json:"risk"`
	Reason    string          `json:"reason"`
	TurnID    string          `json:"turn_id,omitempty"`
}

// ToolResult is what the desktop posts back (and the tool.result event).
type ToolResult struct {
	ID     string  `json:"id"`
	OK     bool    `json:"ok"`
	Result string  `json:"result"`
	Error  *string `json:"error"`
	// Extensions on the tool.result event: how the result came to be
	// ("desktop", "timeout", "cancelled", "service"), and for tools the
	// service runs itself (which have no tool.request) their name and arguments.
	Source    string          `json:"source,omitempty"`
	TurnID    string          `json:"turn_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResultRequest is POST /v1/tools/result.
type ToolResultRequest struct {
	GeneralSessionID string     `json:"general_session_id"`
	ToolResult       ToolResult `json:"tool_result"`
}

// ToolResultResponse answers POST /v1/tools/result.
type ToolResultResponse struct {
	Accepted bool `json:"accepted"`
}

// TextEvent is the data of assistant.delta, assistant.final and user.message.
type TextEvent struct {
	Text   string `json:"text"`
	TurnID string `json:"turn_id,omitempty"`
}

// ErrorEvent is the data of an error event.
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	TurnID  string `json:"turn_id,omitempty"`
}

// StatusEvent is the data of a status event.
type StatusEvent struct {
	Text   string `json:"text"`
	Kind   string `json:"kind,omitempty"`
	TurnID string `json:"turn_id,omitempty"`
}

// ResetEvent is the data of stream.reset.
type ResetEvent struct {
	Reason      string `json:"reason"`
	LastEventID string `json:"last_event_id"`
	LatestID    int64  `json:"latest_id"`
}

// StreamEvent is one event read from a session stream.
type StreamEvent struct {
	ID   string
	Type string
	Data json.RawMessage
}

// EventSession is published when a session is renamed, cleared or deleted.
const EventSession = "session"

// SessionSummary is seed 001's SessionSummary.
type SessionSummary struct {
	SessionID   string          `json:"sessionId"`
	AgentID     string          `json:"agentId"`
	Name        string          `json:"name,omitempty"`
	PinnedAt    string          `json:"pinnedAt,omitempty"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
	LastSnippet string          `json:"lastSnippet,omitempty"`
	Attributes  json.RawMessage `json:"attributes,omitempty"`
}

// SessionList answers GET /v1/sessions.
type SessionList struct {
	Sessions []SessionSummary `json:"sessions"`
}

// SessionEvent is the data of a session event.
type SessionEvent struct {
	Change  string         `json:"change"` // updated | cleared | deleted
	Session SessionSummary `json:"session"`
}

// UpdateSessionRequest is PATCH /v1/sessions/{id}; absent fields are unchanged.
type UpdateSessionRequest struct {
	Name       *string         `json:"name,omitempty"`
	Pinned     *bool           `json:"pinned,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
}

// TranscriptMessage is one stored message.
type TranscriptMessage struct {
	ID         int64           `json:"id"`
	Role       string          `json:"role"` // user | assistant | tool | status
	Text       string          `json:"text"`
	ToolCalls  json.RawMessage `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	TurnID     string          `json:"turnId,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	CreatedAt  string          `json:"createdAt"`
}

// Transcript answers GET /v1/sessions/{id}/messages. LastEventID is the
// session stream's newest event id when the transcript was read: follow the
// stream from there to miss nothing.
type Transcript struct {
	Messages    []TranscriptMessage `json:"messages"`
	LastEventID int64               `json:"lastEventId"`
}

// AgentStatus is an agent's health as the desktop shows it.
type AgentStatus struct {
	State  string `json:"state"` // ok | unknown | failing | unconfigured
	Detail string `json:"detail,omitempty"`
	At     string `json:"at,omitempty"`
}

// AgentInfo is one entry of GET /v1/agents.
type AgentInfo struct {
	AgentID     string      `json:"agentId"`
	DisplayName string      `json:"displayName"`
	Description string      `json:"description,omitempty"`
	Type        string      `json:"type"`
	Provider    string      `json:"provider,omitempty"`
	Model       string      `json:"model,omitempty"`
	Status      AgentStatus `json:"status"`
}

// AgentList answers GET /v1/agents.
type AgentList struct {
	Agents []AgentInfo `json:"agents"`
}

// CreateOperationRequest is seed 000's POST /api/plugins/sessions/operations/create.
type CreateOperationRequest struct {
	AgentID   string  `json:"agentId"`
	SessionID *string `json:"sessionId,omitempty"`
}

// CreateOperationResponse answers it (201).
type CreateOperationResponse struct {
	OK     bool           `json:"ok"`
	Result SessionSummary `json:"result"`
}
