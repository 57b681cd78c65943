package api

// SampleRequest is POST /v1/sessions/{id}/sample: one completion an MCP
// server asked the desktop for (sampling/createMessage), run with the
// session's agent's own model once the user allowed it. Preview runs
// nothing and answers only the model it would use (for the prompt).
type SampleRequest struct {
	Messages     []SampleMessage `json:"messages"`
	SystemPrompt string          `json:"system_prompt,omitempty"`
	MaxTokens    int             `json:"max_tokens,omitempty"`
	Preview      bool            `json:"preview,omitempty"`
}

// SampleMessage is one message of a SampleRequest: role "user" or
// "assistant", and its text.
type SampleMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// SampleResponse answers POST /v1/sessions/{id}/sample: the model's text,
// the model that wrote it, why it stopped ("endTurn", "maxTokens") and
// what the request cost, which the session's running turn also counts.
type SampleResponse struct {
	AgentID    string      `json:"agent_id"`
	Model      string      `json:"model"`
	Text       string      `json:"text,omitempty"`
	StopReason string      `json:"stop_reason,omitempty"`
	Usage      *ReplyUsage `json:"usage,omitempty"`
}
