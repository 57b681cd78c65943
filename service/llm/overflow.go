package llm

import "strings"

// overflowMarks are what servers say when a request does not fit the
// model's context window, lower case:
//   - OpenAI: code "context_length_exceeded", "This model's maximum context
//     length is 8192 tokens. However, your messages resulted in ..."
//   - vLLM: the same sentence, or "Input prompt (N tokens) is too long and
//     exceeds limit of M"
//   - llama.cpp server: type "exceed_context_size_error", "the request
//     exceeds the available context size, try increasing it"
//   - Ollama: "prompt too long; exceeded max context length by N tokens",
//     "input length exceeds maximum context length"
//   - LM Studio: "... the model is loaded with context length of only N
//     tokens, which is not enough", "context overflow", "the number of
//     tokens to keep from the initial prompt is greater than the context length"
//
// Matched on the code, type and message together.
var overflowMarks = []string{
	"context_length_exceeded",
	"exceed_context_size",
	"maximum context length",
	"max context length",
	"exceeds the available context size",
	"exceeds the context size",
	"context window",
	"prompt too long",
	"prompt is too long",
	"is too long and exceeds limit",
	"input length exceeds",
	"context length of only",
	"greater than the context length",
	"context overflow",
	"overflows the context",
}

// IsContextOverflow reports whether an error's text is a context-overflow
// error of one of the servers above.
func IsContextOverflow(text string) bool {
	t := strings.ToLower(text)
	for _, m := range overflowMarks {
		if strings.Contains(t, m) {
			return true
		}
	}
	return false
}
