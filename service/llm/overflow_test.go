package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The context-overflow answers of the servers the service talks to, as
// they send them, are classified as CodeContextOverflow; other 400s are not.
func TestContextOverflowShapes(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"openai", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, CodeContextOverflow},
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, CodeContextOverflow},
		{"vllm-new", 400, `{"error":{"message":"Input prompt (5000 tokens) is too long and exceeds limit of 4096","type":"BadRequestError","code":400}}`, CodeContextOverflow},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`, CodeContextOverflow},
		{"ollama", 400, `{"error":{"message":"prompt too long; exceeded max context length by 812 tokens","type":"api_error","param":null,"code":null}}`, CodeContextOverflow},
		{"ollama-plain", 500, `{"error":"input length exceeds maximum context length"}`, CodeContextOverflow},
		{"lmstudio", 400, `{"error":"Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`, CodeContextOverflow},
		{"other-400", 400, `{"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error"}}`, CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer up.Close()
			p := NewOpenAI(OpenAIOptions{BaseURL: up.URL + "/v1"})
			_, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}, func(string) {})
			var le *Error
			if !errors.As(err, &le) || le.Code != c.want {
				t.Fatalf("got %v, want code %s", err, c.want)
			}
		})
	}
}

// The usage chunk that servers send last (choices empty) is read.
func TestStreamUsage(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}],"usage":null}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","choices":[],"usage":{"prompt_tokens":123,"completion_tokens":7,"total_tokens":130}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	p := NewOpenAI(OpenAIOptions{BaseURL: up.URL + "/v1"})
	rep, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Usage != (Usage{PromptTokens: 123, CompletionTokens: 7}) {
		t.Fatalf("usage %+v", rep.Usage)
	}
}

// A reply bound goes out as max_tokens to OpenAI-compatible servers (what
// llama.cpp, Ollama, LM Studio and vLLM read) and as max_completion_tokens
// to OpenAI's own API (its reasoning models refuse max_tokens).
func TestMaxTokensField(t *testing.T) {
	var body string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	p := NewOpenAI(OpenAIOptions{BaseURL: up.URL + "/v1"})
	if _, err := p.Stream(context.Background(), Request{Model: "m", MaxTokens: 64, Messages: []Message{{Role: "user", Content: "hi"}}}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `"max_tokens":64`) || strings.Contains(body, "max_completion_tokens") {
		t.Fatalf("body %s", body)
	}
	if !NewOpenAI(OpenAIOptions{}).maxCompletion || !NewOpenAI(OpenAIOptions{BaseURL: "https://api.openai.com/v1"}).maxCompletion {
		t.Fatal("OpenAI's API is not sent max_completion_tokens")
	}
}
