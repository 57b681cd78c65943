package api

// Context management of chat sessions (long-lived conversations).

// EventSessionCompacted: older messages of the session were summarized;
// requests send the summary in their place (the transcript keeps them).
const EventSessionCompacted = "session.compacted"

// CompactedEvent is the data of session.compacted and the answer of
// POST /v1/sessions/{id}/compact.
type CompactedEvent struct {
	SummaryID     int64  `json:"summary_id"`
	FromMessageID int64  `json:"from_message_id"` // first transcript message summarized this time
	UptoMessageID int64  `json:"upto_message_id"` // last one (all earlier ones are in the summary)
	Messages      int    `json:"messages"`        // model-visible messages summarized
	TokensBefore  int    `json:"tokens_before"`
	TokensAfter   int    `json:"tokens_after"`
	Window        int    `json:"window"`
	Reason        string `json:"reason"` // budget | overflow | manual
	TurnID        string `json:"turn_id,omitempty"`
	CreatedAt     string `json:"created_at,omitempty"`
}

// CompactionList answers GET /v1/sessions/{id}/compactions, oldest first.
type CompactionList struct {
	Compactions []CompactedEvent `json:"compactions"`
}

// CompactRequest is the optional body of POST /v1/sessions/{id}/compact.
type CompactRequest struct {
	// Instructions say what the summary should keep ("keep the API design").
	Instructions string `json:"instructions,omitempty"`
}

// ContextInfo is a chat session's context use, in GET /v1/sessions/{id}.
type ContextInfo struct {
	Tokens int `json:"tokens"` // what the next request sends, as last measured
	Window int `json:"window"` // the model's context window
	// Limit is the window less the reserve for a reply: compaction starts
	// before a request would pass it.
	Limit       int    `json:"limit"`
	Source      string `json:"source"` // where window came from: config, server, model, default
	Compactions int    `json:"compactions"`
	// What every request sends before the conversation, estimated: the
	// system prompt (instructions, memory, skills) and the definitions of
	// the agent's tools. An empty conversation uses their sum.
	System    int `json:"system"`
	Tools     int `json:"tools"`
	ToolCount int `json:"tool_count"`
	// Compactable: POST /v1/sessions/{id}/compact would summarize something
	// now (false: it would answer nothing_to_compact).
	Compactable bool `json:"compactable"`
}

// SessionDetail answers GET /v1/sessions/{id}.
type SessionDetail struct {
	SessionSummary
	Context *ContextInfo `json:"context,omitempty"`
}
