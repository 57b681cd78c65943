package api

// ReplyUsage is what the model server reported for one turn of the chat
// runtime, carried by its assistant.final: the tokens of all the turn's
// model requests (tool rounds and compaction included) and how much of the
// model's context window the conversation fills after it.
type ReplyUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Requests         int `json:"requests"`
	// ContextTokens is the last request's prompt and reply; ContextWindow
	// the window the service plans for (0 when unknown).
	ContextTokens int `json:"context_tokens,omitempty"`
	ContextWindow int `json:"context_window,omitempty"`
}
