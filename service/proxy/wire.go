package proxy

// Wire types of docs/protocols/proxy-agents.md's Agent Protocol: what crosses HTTP between the
// proxy agent and an external agent. Domain code uses Input and Response;
// these exist to encode the default request and, for agents written in Go
// (proxytest, adapters), to produce conforming responses.

// AgentRequest is the Agent Protocol request the proxy sends when a
// definition has no body template.
//
// The protocol's original example is not valid JSON where it shows "input": it writes
// `"input": ["type": "text", "content": "User Input"]`, an array holding
// key/value pairs. We send what it evidently means, an array of part
// objects: "input": [{"type": "text", "content": "User Input"}]. The original
// also types debug.enable and stream.enable as "string" while its prose
// says to set them to true; we send JSON booleans.
type AgentRequest struct {
	SessionIdentity []Identity     `json:"sessionIdentity"`
	Input           []Part         `json:"input"`
	Debug           *DebugOptions  `json:"debug,omitempty"`
	Stream          *StreamOptions `json:"stream,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	// CallbackURL is not in the seed: it tells an async agent where to POST
	// its responses. Agents that ignore unknown fields are unaffected.
	CallbackURL string `json:"callbackUrl,omitempty"`
}

// Identity is one sessionIdentity entry.
type Identity struct {
	Type  string `json:"type"` // sessionReference | userReference
	Value string `json:"value"`
}

// Part is one input, output or debug item: {type, content}. Output types
// are text, image, file or audio; debug items have type "thought".
type Part struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// AgentResponse is the Agent Protocol response (docs/protocols/proxy-agents.md).
type AgentResponse struct {
	MessageID   string       `json:"messageId,omitempty"`
	Output      []Part       `json:"output,omitempty"`
	Debug       []Part       `json:"debug,omitempty"`
	SessionInfo *SessionInfo `json:"sessionInfo,omitempty"`
}

// SessionInfo is the response's session block. Output, when present, is the
// whole answer of the turn stitched together; it completes the turn.
type SessionInfo struct {
	Status            string `json:"status,omitempty"`            // idle | busy | error
	ConversationState string `json:"conversationState,omitempty"` // COMPLETED | ACTIVE | ERROR
	UserReference     string `json:"userReference,omitempty"`
	SessionReference  string `json:"sessionReference,omitempty"`
	UserID            string `json:"userId,omitempty"`
	SessionID         string `json:"sessionId,omitempty"`
	RunID             string `json:"runId,omitempty"`
	AppID             string `json:"appId,omitempty"`
	Output            *Part  `json:"output,omitempty"`
}

// Values of SessionInfo.Status and SessionInfo.ConversationState.
const (
	StatusIdle  = "idle"
	StatusBusy  = "busy"
	StatusError = "error"

	StateCompleted = "COMPLETED"
	StateActive    = "ACTIVE"
	StateError     = "ERROR"
)
