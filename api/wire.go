// Package api holds the wire types of the General Agent Service's HTTP API
// (what crosses HTTP, with the field names of docs/protocols/service-api.md) and a typed Go client
// for it, shared by the desktop app, the tests and the benchmarks.
//
// It imports nothing of the service, so the desktop depends on the API, not
// on the implementation.
package api

import (
	"encoding/json"
	"strings"
)

// Event types on a session stream. The first five are docs/protocols/service-api.md's.
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

// Error is the error envelope of docs/protocols/service-api.md.
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
	Type     string    `json:"type"`
	Text     string    `json:"text"`
	ImageURL *ImageURL `json:"image_url,omitempty"` // type image_url (attach.go)
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
	// ReplacesTurnID, when set, makes the message a new version of that
	// turn of the session (Regenerate, Retry, Edit): the conversation
	// branches there, and only the new branch is shown and sent to the model.
	ReplacesTurnID string `json:"replaces_turn_id,omitempty"`
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
	// Source "service" marks a tool the service runs itself but that sends
	// data out of the process (agents_message to an agent that is not an
	// in-process chat agent, round_table): the service runs it only if the
	// desktop's result is ok. Target says where the data would go.
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
	// DelegatedBy names the agents whose agents_message calls started the
	// turn (nearest last): the call is a delegated agent's, not the user's
	// own conversation's, even when it runs in a session the user has open.
	DelegatedBy []string `json:"delegated_by,omitempty"`
	// Untrusted lists where the untrusted text in the model's context came
	// from when it asked for this call (empty: only the user's words and
	// Jarvis's own): the gate asks before such a call sends data out.
	Untrusted []Source `json:"untrusted,omitempty"`
	// Task marks a call of a scheduled task's run (background work).
	Task *TaskRef `json:"task,omitempty"`
}

// UserReasonMax caps what the user wrote in "Tell the agent why" (runes).
const UserReasonMax = 2000

// UserReason is the user's reason for a denial as the gate records it and
// the model reads it: trimmed and capped at UserReasonMax runes.
func UserReason(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > UserReasonMax {
		s = string(r[:UserReasonMax]) + "…"
	}
	return s
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
	// Refused marks a call the service refused without running it (a tool
	// outside the agent's scope, an unknown tool).
	Refused bool `json:"refused,omitempty"`
	// Trust is the desktop's word on the result's text: Trusted or
	// Untrusted; anything else (a client that says nothing) counts as
	// untrusted. Origin says where an untrusted result came from (an MCP
	// server, the URL a file was downloaded from, a program's output).
	Trust  string  `json:"trust,omitempty"`
	Origin *Source `json:"origin,omitempty"`
	// Redacted: secret values were removed from the result (each replaced
	// by "[redacted]") before it was stored or sent to the model; the card
	// says so.
	Redacted bool `json:"redacted,omitempty"`
	// UserReason, on a call the user denied, is what they wrote in "Tell
	// the agent why": the model reads it with the denial.
	UserReason string `json:"user_reason,omitempty"`
	// Media are the images and audio a tool returned (an MCP tool's image
	// or audio content), beside its text: the window shows them; images
	// reach a model that reads images (the text carries a placeholder).
	Media []Media `json:"media,omitempty"`
}

// Media is one image or audio clip of a tool's result.
type Media struct {
	Type     string `json:"type"` // "image" or "audio"
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"` // base64
}

// DataURL is m as a data URL (how a model is sent an image).
func (m Media) DataURL() string { return "data:" + m.MIMEType + ";base64," + m.Data }

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
	// Kind "status" marks an assistant.final whose text is a status line, not
	// a reply: an external agent's forward ends its turn with "Sent to
	// external agent", and the agent's replies come later.
	Kind string `json:"kind,omitempty"`
	// Usage is on a chat runtime's assistant.final when the model server
	// reported its token counts (usage.go).
	Usage *ReplyUsage `json:"usage,omitempty"`
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
	// Plan is a coding agent's whole plan (kind "plan"); Text says it in lines.
	Plan []PlanStep `json:"plan,omitempty"`
	// Choices are an ACP agent's modes and models in the session and the
	// current ones (kind "agent_choices").
	Choices *AgentChoices `json:"choices,omitempty"`
	// Diff is a file change an ACP agent's tool call reported (kind "diff").
	Diff *FileDiff `json:"diff,omitempty"`
}

// AgentChoices are the modes and models an ACP agent offers in a session
// and the current ones (status kind "agent_choices";
// GET and PUT /v1/sessions/{id}/agent-choice).
type AgentChoices struct {
	Modes  []AgentChoice `json:"modes,omitempty"`
	Mode   string        `json:"mode,omitempty"`
	Models []AgentChoice `json:"models,omitempty"`
	Model  string        `json:"model,omitempty"`
}

// AgentChoice is one mode or model.
type AgentChoice struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// AgentChoiceRequest is PUT /v1/sessions/{id}/agent-choice: the mode and
// model the user chose ("" leaves one as it is).
type AgentChoiceRequest struct {
	Mode  string `json:"mode,omitempty"`
	Model string `json:"model,omitempty"`
}

// SignInRequest is PUT /v1/agents/{agentId}/sign-in: the keys of one of
// the ACP agent's env_var sign-in methods, by variable name.
type SignInRequest struct {
	MethodID string            `json:"methodId"`
	Values   map[string]string `json:"values"`
}

// FileDiff is a file change an ACP agent reported in a tool call.
type FileDiff struct {
	ToolCallID string `json:"tool_call_id,omitempty"`
	Title      string `json:"title,omitempty"`
	Path       string `json:"path"`
	// Old is the text before (absent: a new file), New the text after;
	// both absent when Omitted (too long to show).
	Old     *string `json:"old,omitempty"`
	New     string  `json:"new"`
	Omitted bool    `json:"omitted,omitempty"`
	// Undo is "turn" when Jarvis wrote the file for the agent (the desktop
	// saved it before: the turn's undo restores it), "none" when the agent
	// wrote it itself (Jarvis holds no copy of the file as it was).
	Undo string `json:"undo"`
}

// PlanStep is one step of a plan; Status is pending, in_progress or completed.
type PlanStep struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority,omitempty"`
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

// SessionSummary is docs/protocols/agents.md's SessionSummary.
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
	// NextCursor, on a full page, is the cursor of the page after it.
	NextCursor string `json:"nextCursor,omitempty"`
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
	// Versions lists, for each shown turn that has others (Regenerate,
	// Retry, Edit made them), its versions oldest first; only the shown
	// branch's messages are in Messages.
	Versions []TurnVersions `json:"versions,omitempty"`
}

// TurnVersions are the versions of one place of a conversation: turns that
// answer in its place, oldest first; Shown is the one on the shown branch.
type TurnVersions struct {
	Shown string   `json:"shown"`
	Turns []string `json:"turns"`
}

// ShowVersionRequest is POST /v1/sessions/{id}/versions: show the branch
// through turn TurnID (and the newest turn that continues it).
type ShowVersionRequest struct {
	TurnID string `json:"turnId"`
}

// AgentStatus is an agent's health as the desktop shows it.
type AgentStatus struct {
	State  string `json:"state"` // ok | unknown | failing | unconfigured
	Detail string `json:"detail,omitempty"`
	At     string `json:"at,omitempty"`
	// External is set for external agents: last forward and last callback.
	External *ExternalAgentStatus `json:"external,omitempty"`
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
	// Proxy is set for proxy agents (docs/protocols/proxy-agents.md).
	Proxy *ProxyAgentInfo `json:"proxy,omitempty"`
	// A2A is set for A2A agents: their card's skills.
	A2A *A2AAgentInfo `json:"a2a,omitempty"`
}

// A2AAgentInfo is an A2A agent's card as GET /v1/agents shows it (its
// skills once the card was read).
type A2AAgentInfo struct {
	CardURL string     `json:"cardUrl,omitempty"`
	Name    string     `json:"name,omitempty"`
	Skills  []A2ASkill `json:"skills"`
}

// A2ASkill is one skill of an A2A agent's card.
type A2ASkill struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// AgentList answers GET /v1/agents.
type AgentList struct {
	Agents []AgentInfo `json:"agents"`
	// Warning: the config file could not be reloaded and the service runs
	// on the config it had (the file was deleted, for one).
	Warning string `json:"warning,omitempty"`
	// PendingConfig: the config file changed outside Jarvis and waits for
	// the user's approval (POST /v1/config/approve with its hash).
	PendingConfig *PendingConfig `json:"pendingConfig,omitempty"`
}

// PendingConfig is a config file content not applied until approved: what
// it would start, where it would connect, which secrets it would send.
type PendingConfig struct {
	Path  string   `json:"path"`
	Hash  string   `json:"hash"` // SHA-256 of the content the lines describe
	Lines []string `json:"lines"`
}

// ApproveConfigRequest is POST /v1/config/approve: the hash of the pending
// content the user was shown.
type ApproveConfigRequest struct {
	Hash string `json:"hash"`
}

// CreateOperationRequest is docs/protocols/external-agents.md's POST /api/plugins/sessions/operations/create.
type CreateOperationRequest struct {
	AgentID   string  `json:"agentId"`
	SessionID *string `json:"sessionId,omitempty"`
}

// CreateOperationResponse answers it (201).
type CreateOperationResponse struct {
	OK     bool           `json:"ok"`
	Result SessionSummary `json:"result"`
}

// External agents (docs/protocols/external-agents.md).

// EventOriginExternal is the origin of an assistant.final injected by an external agent.
const EventOriginExternal = "external"

// ExternalInput is what the service POSTs to an external agent's inputUrl (docs/protocols/external-agents.md).
// The request carries Idempotency-Key (and, for agents with a secret, the
// Standard Webhooks headers): a retried forward has the same key.
type ExternalInput struct {
	SessionID   string               `json:"sessionId"`
	AgentID     string               `json:"agentId"`
	CallbackURL string               `json:"callbackUrl"`
	Message     ExternalInputMessage `json:"message"`
}

// ExternalInputMessage is the user's message in an ExternalInput.
type ExternalInputMessage struct {
	Type      string `json:"type"` // "user"
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"` // RFC 3339, UTC, milliseconds
}

// ExternalMessageRequest is the application/json form of a callback body
// (POST /external/sessions/{sessionId}/messages); any other content type is
// the raw text itself.
type ExternalMessageRequest struct {
	Text string `json:"text"`
}

// ExternalMessageResponse answers a callback (200).
type ExternalMessageResponse struct {
	OK        bool   `json:"ok"`
	MessageID int64  `json:"messageId,omitempty"` // the stored message
	EventID   int64  `json:"eventId,omitempty"`   // its assistant.final on the session stream
	TurnID    string `json:"turnId,omitempty"`    // the fresh id of the reply (turn_id of the event)
	Duplicate bool   `json:"duplicate,omitempty"` // the delivery id was already applied: nothing added
	Sanitized bool   `json:"sanitized,omitempty"` // invalid UTF-8 or NUL bytes were removed
}

// ExternalReplyEvent is the data of the assistant.final event of a reply an
// external agent posted: origin "external" and a fresh turn_id of its own
// (it is not the end of a turn the user started).
type ExternalReplyEvent struct {
	Text    string `json:"text"`
	TurnID  string `json:"turn_id"`
	Origin  string `json:"origin"`
	AgentID string `json:"agent_id"`
}

// ExternalSessionInfo answers GET /v1/external/sessions/{sessionId}: the
// callback URL (with its secret) that the session's agent is given.
type ExternalSessionInfo struct {
	SessionID   string `json:"sessionId"`
	AgentID     string `json:"agentId"`
	InputURL    string `json:"inputUrl"`
	CallbackURL string `json:"callbackUrl"`
}

// ExternalAgentStatus is an external agent's part of AgentStatus.
type ExternalAgentStatus struct {
	LastForwardAt     string `json:"lastForwardAt,omitempty"`
	LastForwardOK     bool   `json:"lastForwardOk"`
	LastForwardResult string `json:"lastForwardResult,omitempty"`
	LastCallbackAt    string `json:"lastCallbackAt,omitempty"`
	CallbackAuth      string `json:"callbackAuth"` // token | token+signature | none
}

// Agents (docs/protocols/agents.md): default routing and delegation.

// AgentSessionResponse answers POST /v1/agents/{agentId}/session: the agent's
// most recently updated session, or a new one (Created, status 201).
type AgentSessionResponse struct {
	Session SessionSummary `json:"session"`
	Created bool           `json:"created"`
}

// AgentsMessageResult is the result of the agents_message tool (docs/protocols/agents.md), as
// the calling model reads it. Sync mode has status complete or timeout; async
// mode has status started.
type AgentsMessageResult struct {
	Mode           string              `json:"mode"`
	Status         string              `json:"status"`
	AgentID        string              `json:"agentId"`
	SessionID      string              `json:"sessionId"`
	SessionName    string              `json:"sessionName"`
	Created        bool                `json:"created"`
	ResponseID     string              `json:"responseId,omitempty"`
	Response       string              `json:"response,omitempty"`
	Truncated      bool                `json:"truncated,omitempty"`
	DurationMs     *int64              `json:"durationMs,omitempty"`
	ToolCallCount  *int                `json:"toolCallCount,omitempty"`
	ToolCalls      []DelegatedToolCall `json:"toolCalls,omitempty"`
	ThinkingText   string              `json:"thinkingText,omitempty"`
	TimeoutSeconds float64             `json:"timeoutSeconds,omitempty"`
	Message        string              `json:"message,omitempty"`
	// InjectionFlags name what the injection scanner (service/injection)
	// found in Response: text that reads like instructions to a model.
	// The reply is kept whole; the caller's model is told to treat it as data.
	InjectionFlags []string `json:"injectionFlags,omitempty"`
}

// DelegatedToolCall is one tool call of a delegated turn.
type DelegatedToolCall struct {
	Name       string `json:"name"`
	DurationMs int64  `json:"durationMs"`
}

// MemoryWriteRequest is POST /v1/memory/write.
type MemoryWriteRequest struct {
	GeneralSessionID string `json:"general_session_id,omitempty"`
	Target           string `json:"target"` // long_term | daily
	Content          string `json:"content"`
	// Replaces names the lines stating the old value of a fact this entry
	// changes, as search shows them ("memory/2026-02-10.md:12" or
	// "PATH:START-END"); they are marked superseded by the new entry.
	Replaces []string `json:"replaces,omitempty"`
}

// MemoryWriteResponse answers it: the file's path relative to the workspace.
type MemoryWriteResponse struct {
	Path string `json:"path"`
}

// MemoryResult is one search hit: the lines line_start..line_end (1-based,
// inclusive) of the file at path hold the excerpt.
type MemoryResult struct {
	Path      string `json:"path"`
	Excerpt   string `json:"excerpt"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	// Flags names the prompt-injection patterns the excerpt matches, if any.
	Flags []string `json:"flags,omitempty"`
	// Superseded: the line was marked as replaced by a newer note
	// (SupersededBy names its file); it is history, not the current fact.
	Superseded   bool   `json:"superseded,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
}

// MemorySearchResponse answers GET /v1/memory/search.
type MemorySearchResponse struct {
	Results []MemoryResult `json:"results"`
	// Retrieval says how the notes were matched: "hybrid" (words and an
	// embedding model), "keyword+synonyms" (words, stems and WordNet
	// synonyms) or "keyword" (words and stems).
	Retrieval string `json:"retrieval"`
	// Embeddings is the background embedding's progress, when a model is
	// configured.
	Embeddings *MemoryEmbeddings `json:"embeddings,omitempty"`
}

// MemoryEmbeddings: how many of the index's chunks have a vector.
type MemoryEmbeddings struct {
	Model    string `json:"model"`
	Embedded int    `json:"embedded"`
	Total    int    `json:"total"`
	Paused   bool   `json:"paused,omitempty"`
	Error    string `json:"error,omitempty"`
}

// MemoryEmbeddingsRequest is POST /v1/memory/embeddings: pause or resume
// the background embedding of the notes.
type MemoryEmbeddingsRequest struct {
	Paused *bool `json:"paused"`
}

// MemoryRetrieval answers GET and POST /v1/memory/embeddings: how search
// matches notes and the embedding's progress (nil without an embedding
// model).
type MemoryRetrieval struct {
	Retrieval  string            `json:"retrieval"`
	Embeddings *MemoryEmbeddings `json:"embeddings,omitempty"`
}

// Proxy agents (docs/protocols/proxy-agents.md).

// ProxyAgentInfo is a proxy agent's part of AgentInfo. Status.State is
// ok | failing | unknown from its last call (unconfigured for a bad
// definition), Status.Detail the last error.
type ProxyAgentInfo struct {
	ExternalPlatform string `json:"externalPlatform,omitempty"`
	Avatar           string `json:"avatar,omitempty"`
	Async            bool   `json:"async"`
	Streaming        bool   `json:"streaming"`
	RouteToUser      bool   `json:"routeToUser"`
	TimeoutSeconds   int    `json:"timeoutSeconds"`
	// CallbackURLTemplate is where an async agent posts its answers; each
	// request carries the concrete URL (with the per-session token) in its
	// callbackUrl field.
	CallbackURLTemplate string `json:"callbackUrlTemplate,omitempty"`
	CallbackAuth        string `json:"callbackAuth,omitempty"` // token | token+webhook-signature | none
	// AgentStatus is the last sessionInfo.status the agent sent (idle | busy | error).
	AgentStatus string `json:"agentStatus,omitempty"`
	Failures    int    `json:"failures"` // consecutive failed calls
}

// ProxyTestRequest is POST /v1/agents/{agentId}/test: sample values for
// the request (all optional).
type ProxyTestRequest struct {
	Text      string `json:"text"`
	SessionID string `json:"sessionId,omitempty"`
	UserID    string `json:"userId,omitempty"`
}

// ProxyTestReport answers it: what the agent did with the real request.
// A failing agent is reported here (Error, ErrorKind), not as an HTTP error.
type ProxyTestReport struct {
	Status       int      `json:"status"` // the agent's HTTP status; 0 if none
	LatencyMs    int64    `json:"latencyMs"`
	ContentType  string   `json:"contentType,omitempty"`
	RequestBody  string   `json:"requestBody,omitempty"` // headers are not shown: they may hold secrets
	RawResponse  string   `json:"rawResponse"`           // capped at 16 KiB
	RawTruncated bool     `json:"rawTruncated,omitempty"`
	Parsed       bool     `json:"parsed"`
	ParseError   string   `json:"parseError,omitempty"`
	Error        string   `json:"error,omitempty"`
	ErrorKind    string   `json:"errorKind,omitempty"` // timeout | status | malformed | too_large | redirect | unreachable | invalid | secret
	Output       string   `json:"output"`
	Thoughts     []string `json:"thoughts,omitempty"`
	AgentStatus  string   `json:"agentStatus,omitempty"`
	Chunks       int      `json:"chunks,omitempty"`
	Pending      bool     `json:"pending,omitempty"`     // async: acknowledged; the answer goes to CallbackURL
	CallbackURL  string   `json:"callbackUrl,omitempty"` // async: the URL sent in the request
}

// ProxyCallbackResponse answers POST /proxy/agents/{agentId}/sessions/{sessionId}/callback.
type ProxyCallbackResponse struct {
	Accepted  bool `json:"accepted"`
	Final     bool `json:"final,omitempty"`     // this response completed the answer
	Late      bool `json:"late,omitempty"`      // the call had timed out: recorded, not shown as the turn's answer
	Duplicate bool `json:"duplicate,omitempty"` // a replayed webhook-id: ignored
}

// Round tables (docs/protocols/roundtable-agents.md). Progress of a deliberation is published on the
// session stream it runs in, as roundtable.progress events, and its end as
// one roundtable.result event (stored with the run: a client that sees it
// can GET the run at once).
const (
	EventRoundtableProgress = "roundtable.progress"
	EventRoundtableResult   = "roundtable.result"
)

// RoundtableAgentRegistration is the body of POST /api/v1/agents and
// PUT /api/v1/agents/{name} (docs/protocols/roundtable-agents.md's fields, plus timeout_seconds).
type RoundtableAgentRegistration struct {
	Name         string   `json:"name"`
	Domain       string   `json:"domain"`
	BaseURL      string   `json:"base_url"`
	APIKey       string   `json:"api_key,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	Mode         string   `json:"mode,omitempty"`
	// TimeoutSeconds is how long the service waits for each of this
	// agent's answers (0: the service default, 120 s).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// RoundtableAgentPatch is the body of PATCH /api/v1/agents/{name}: absent
// fields are unchanged; "api_key": "" removes the key.
type RoundtableAgentPatch struct {
	Domain         *string   `json:"domain,omitempty"`
	BaseURL        *string   `json:"base_url,omitempty"`
	APIKey         *string   `json:"api_key,omitempty"`
	Capabilities   *[]string `json:"capabilities,omitempty"`
	Mode           *string   `json:"mode,omitempty"`
	TimeoutSeconds *int      `json:"timeout_seconds,omitempty"`
}

// RoundtableAgent is a registered round-table agent as the API shows it.
// The key is never shown: has_api_key says whether one is registered and
// api_key_ref where it lives (the OS keyring, or JARVIS_SECRET_<REF>).
type RoundtableAgent struct {
	Name           string      `json:"name"`
	Domain         string      `json:"domain"`
	BaseURL        string      `json:"base_url"`
	Capabilities   []string    `json:"capabilities"`
	Mode           string      `json:"mode"`
	HasAPIKey      bool        `json:"has_api_key"`
	APIKeyRef      string      `json:"api_key_ref"`
	TimeoutSeconds int         `json:"timeout_seconds"`
	Health         AgentStatus `json:"health"` // unknown | ok | failing | unhealthy, from the last round table
	// KeyStorage is "file" in the answer to a registration or update whose
	// api_key went to the less protected fallback file (no OS keyring).
	KeyStorage string `json:"key_storage,omitempty"`
	CreatedAt  string `json:"created_at"`
	UpdatedAt  string `json:"updated_at"`
}

// RoundtableAgentList answers GET /api/v1/agents.
type RoundtableAgentList struct {
	Agents []RoundtableAgent `json:"agents"`
}

// StartRoundtableRequest is POST /v1/roundtables.
type StartRoundtableRequest struct {
	Content string `json:"content"`
	// Participants names registered agents; empty means those whose domain
	// or capabilities match the content (all of them when none match).
	Participants     []string       `json:"participants,omitempty"`
	Constraints      []string       `json:"constraints,omitempty"`
	Context          map[string]any `json:"context,omitempty"`
	GeneralSessionID string         `json:"general_session_id,omitempty"` // the stream for progress; default a new session
	// TimeoutSeconds, when set, bounds each call to every agent; by default
	// each agent is waited for its own registered timeout_seconds (120 when
	// unset).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// StartRoundtableResponse answers POST /v1/roundtables (202).
type StartRoundtableResponse struct {
	ID               string   `json:"id"`
	GeneralSessionID string   `json:"general_session_id"`
	Participants     []string `json:"participants"`
	Status           string   `json:"status"` // running
}

// RoundtableTask is what a round table deliberated on.
type RoundtableTask struct {
	ID          string         `json:"id"`
	Content     string         `json:"content"`
	Context     map[string]any `json:"context,omitempty"`
	Constraints []string       `json:"constraints,omitempty"`
}

// RoundtableAnswer is one stored answer of one agent (kind analysis,
// challenge, concession or vote) or one exclusion (kind exclusion), as
// sanitised by the engine.
type RoundtableAnswer struct {
	Seq   int             `json:"seq"`
	Agent string          `json:"agent"`
	Phase string          `json:"phase"`
	Kind  string          `json:"kind"`
	Data  json.RawMessage `json:"data"`
}

// RoundtableRun answers GET /v1/roundtables/{id}. Result is the engine's
// whole result (null while running); Markdown is its rendering.
type RoundtableRun struct {
	ID               string             `json:"id"`
	GeneralSessionID string             `json:"general_session_id"`
	TurnID           string             `json:"turn_id,omitempty"`
	Source           string             `json:"source"` // api | tool | agent
	Status           string             `json:"status"` // running | completed | no_participants | no_analyses | no_votes | cancelled | interrupted | failed
	Outcome          string             `json:"outcome,omitempty"`
	Summary          string             `json:"summary,omitempty"`
	Task             RoundtableTask     `json:"task"`
	Participants     []string           `json:"participants"`
	CreatedAt        string             `json:"created_at"`
	FinishedAt       string             `json:"finished_at,omitempty"`
	Answers          []RoundtableAnswer `json:"answers"`
	Result           json.RawMessage    `json:"result"`
	Markdown         string             `json:"markdown,omitempty"`
}

// RoundtableRunList answers GET /v1/roundtables (newest first, without
// answers, result or markdown).
type RoundtableRunList struct {
	Runs []RoundtableRun `json:"runs"`
}

// RoundtableProgressEvent is the data of roundtable.progress. Type is one
// of the engine's progress types (phase_started, phase_finished,
// agent_responded, agent_failed, synthesis, vote) or the service's own:
// started (participants chosen), waiting (agents still awaited in a phase,
// repeated while the wait lasts).
type RoundtableProgressEvent struct {
	RunID   string `json:"run_id"`
	TurnID  string `json:"turn_id,omitempty"`
	Type    string `json:"type"`
	TaskID  string `json:"task_id,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Message string `json:"message"`
	At      string `json:"at"`
	// WaitingFor lists the agents awaited (phase_started, waiting);
	// WaitingUntil gives, for each, the time (RFC 3339, UTC) until which the
	// table waits for its answer (its own call timeout from the phase's
	// start). TimeoutSeconds is the longest of those timeouts (started,
	// phase_started, waiting).
	WaitingFor     []string          `json:"waiting_for,omitempty"`
	WaitingUntil   map[string]string `json:"waiting_until,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty"`
	Participants   []string          `json:"participants,omitempty"` // started
	Exclusion      json.RawMessage   `json:"exclusion,omitempty"`    // agent_failed
	Synthesis      json.RawMessage   `json:"synthesis,omitempty"`    // synthesis
	Vote           json.RawMessage   `json:"vote,omitempty"`         // vote
}

// RoundtableResultEvent is the data of roundtable.result.
type RoundtableResultEvent struct {
	RunID    string          `json:"run_id"`
	TurnID   string          `json:"turn_id,omitempty"`
	Status   string          `json:"status"`
	Outcome  string          `json:"outcome,omitempty"`
	Summary  string          `json:"summary"`
	Markdown string          `json:"markdown"`
	Result   json.RawMessage `json:"result"`
}

// ProviderInfo is a configured provider (never its key).
type ProviderInfo struct {
	BaseURL   string `json:"baseUrl,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyRef string `json:"apiKeyRef,omitempty"`
}

// DiscoveredServer is a local OpenAI-compatible server found on its default port.
type DiscoveredServer struct {
	Name    string   `json:"name"`
	BaseURL string   `json:"baseUrl"`
	Models  []string `json:"models"`
	// EmbeddingModels are the models of Models that compute embeddings
	// (nomic-embed-text, bge-m3, …), which memory can use to find notes by
	// meaning; not chat models.
	EmbeddingModels []string `json:"embeddingModels,omitempty"`
	// Sizes are the models' sizes on disk in bytes, where the server lists
	// them (Ollama's /api/tags); the setup's model chips show them.
	Sizes map[string]int64 `json:"sizes,omitempty"`
}

// ProvidersInfo answers GET /v1/providers (and PUT).
type ProvidersInfo struct {
	Configured      bool                    `json:"configured"` // the default agent can chat
	Problem         string                  `json:"problem,omitempty"`
	DefaultProvider string                  `json:"defaultProvider"`
	Providers       map[string]ProviderInfo `json:"providers"`
	OpenAIKeyStored bool                    `json:"openaiKeyStored"`
	// KeyStorage says where the OpenAI key was found: "env", "keyring", or
	// "file" (the less protected fallback when no OS keyring is available;
	// SecretsFile is then its path).
	KeyStorage  string             `json:"keyStorage,omitempty"`
	SecretsFile string             `json:"secretsFile,omitempty"`
	Discovered  []DiscoveredServer `json:"discovered"`
}

// SetEmbeddingRequest is PUT /v1/memory/embeddings (and its answer): the
// embedding model of a local OpenAI-compatible server memory search uses
// to find notes by meaning; an empty Model turns it off (keyword search).
type SetEmbeddingRequest struct {
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"`
}

// SetProviderRequest is PUT /v1/providers: "openai" with an apiKey (stored in
// the OS keyring, never in the file) and optional model, or
// "openai-compatible" with baseUrl and model (and an optional apiKey).
type SetProviderRequest struct {
	Provider string `json:"provider"`
	APIKey   string `json:"apiKey,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Model    string `json:"model,omitempty"`
}
