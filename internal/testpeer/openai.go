// Package testpeer holds scripted real peers for tests, benchmarks and the
// end-to-end run: an OpenAI-compatible chat completions server that streams
// chunks exactly as the real API does (text deltas, tool-call deltas split
// across chunks, parallel tool calls) and fails on demand.
//
// The script is driven by directives in the last user message, so a test
// can drive the real service through its public API alone:
//
//	[[tool NAME {"json":"args"}]]  call a tool (repeat for parallel calls; only when the request offers tools)
//	[[deltas N]]                   stream N deltas "w0 ", "w1 ", ...
//	[[slow MS]]                    wait MS milliseconds before each chunk
//	[[status CODE]]                answer with that HTTP status and an error body
//	[[hang]]                       never answer (until the client gives up)
//	[[malformed]]                  send a broken chunk mid-stream
//	[[truncate]]                   close the stream without a finish_reason
//
// Anything else is echoed back as "You said: <text>". After tool results
// the model answers "Tool results: <result>; <result>".
//
// Like real servers it counts tokens (CountTokens: about four bytes a
// token), reports usage (on every whole answer, and in a last chunk when a
// stream asks with stream_options.include_usage), stops a reply at
// max_tokens (finish_reason "length"), and with ContextLimit set refuses a
// request whose prompt and max_tokens pass it with OpenAI's
// context_length_exceeded error.
//
// Safe for concurrent use.
package testpeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/service/llm"
)

// Call is a scripted tool call.
type Call struct {
	ID, Name, Args string
}

// Script is one scripted answer.
type Script struct {
	Status    int // non-zero: answer with this status and an OpenAI error body
	Deltas    []string
	Calls     []Call
	Delay     time.Duration // before each chunk
	Hang      bool
	Malformed bool
	Truncate  bool
}

// OpenAI is a scripted OpenAI-compatible server; use it as an http.Handler.
type OpenAI struct {
	// Respond overrides the directive-driven script when set.
	Respond func(req openai.ChatCompletionRequest) Script
	// Keep, when above 0, is how many of the newest requests Requests
	// and Authorizations remember (a long benchmark would otherwise make
	// the peer's heap, and so its pauses, grow with every request).
	Keep int
	// ContextLimit, when above 0, is the model's context window in tokens,
	// reported by GET /v1/models as vLLM does (max_model_len).
	ContextLimit int
	// Model is the id GET /v1/models lists; default "test-model".
	Model string
	// APIKey, when set, is the only key accepted: any request without
	// "Authorization: Bearer <APIKey>" gets OpenAI's 401 invalid_api_key.
	APIKey    string
	mu        sync.Mutex
	noImages  bool // SetNoImages
	maxPrompt int  // the largest prompt received, in tokens
	overflows int  // requests refused for passing ContextLimit
	requests  []openai.ChatCompletionRequest
	auths     []string // Authorization header of each request
	calls     int
}

// Authorizations returns the Authorization header of each request received.
func (o *OpenAI) Authorizations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.auths...)
}

// NewOpenAI returns a scripted server.
func NewOpenAI() *OpenAI { return &OpenAI{} }

// SetNoImages makes it a model that does not read images (on) or one that
// does: a request carrying an image part gets a 400, as text-only servers
// answer.
func (o *OpenAI) SetNoImages(on bool) {
	o.mu.Lock()
	o.noImages = on
	o.mu.Unlock()
}

// Requests returns the requests received so far.
func (o *OpenAI) Requests() []openai.ChatCompletionRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), o.requests...)
}

func (o *OpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+o.APIKey {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`))
		return
	}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		// vLLM's shape: the window is max_model_len.
		m := map[string]any{"id": o.model(), "object": "model", "owned_by": "testpeer"}
		if o.ContextLimit > 0 {
			m["max_model_len"] = o.ContextLimit
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{m}})
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.requests = append(o.requests, req)
	o.auths = append(o.auths, r.Header.Get("Authorization"))
	if o.Keep > 0 && len(o.requests) > o.Keep {
		o.requests = append(o.requests[:0], o.requests[len(o.requests)-o.Keep:]...)
		o.auths = append(o.auths[:0], o.auths[len(o.auths)-o.Keep:]...)
	}
	o.calls++
	n := o.calls
	prompt := CountTokens(req)
	o.maxPrompt = max(o.maxPrompt, prompt)
	if req.MaxCompletionTokens > 0 {
		req.MaxTokens = req.MaxCompletionTokens // OpenAI's newer name for it
	}
	over := o.ContextLimit > 0 && prompt+req.MaxTokens > o.ContextLimit
	refuse := o.noImages && HasImages(req)
	if over {
		o.overflows++
	}
	o.mu.Unlock()
	if refuse {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"image input is not supported by this model","type":"invalid_request_error","code":null}}`))
		return
	}
	if over {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, o.ContextLimit, prompt+req.MaxTokens)
		return
	}
	var sc Script
	if o.Respond != nil {
		sc = o.Respond(req)
	} else {
		sc = Directives(req)
	}
	if sc.Hang {
		<-r.Context().Done()
		return
	}
	if sc.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(sc.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error","code":null}}`, sc.Status)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", n)
	finish := openai.FinishReasonStop
	if len(sc.Calls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	if req.MaxTokens > 0 && len(sc.Calls) == 0 {
		// Stop at max_tokens, as servers do.
		budget, cut := req.MaxTokens, len(sc.Deltas)
		for i, d := range sc.Deltas {
			if budget -= TextTokens(d); budget < 0 {
				cut = i
				finish = openai.FinishReasonLength
				break
			}
		}
		sc.Deltas = sc.Deltas[:cut]
	}
	completion := 0
	for _, d := range sc.Deltas {
		completion += TextTokens(d)
	}
	for _, c := range sc.Calls {
		completion += 4 + TextTokens(c.Name) + TextTokens(c.Args)
	}
	usage := &openai.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	if !req.Stream {
		o.writeWhole(w, id, req.Model, sc, finish, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(delta openai.ChatCompletionStreamChoiceDelta, finish openai.FinishReason) bool {
		if sc.Delay > 0 {
			select {
			case <-time.After(sc.Delay):
			case <-r.Context().Done():
				return false
			}
		}
		chunk := openai.ChatCompletionStreamResponse{ID: id, Object: "chat.completion.chunk", Model: req.Model,
			Choices: []openai.ChatCompletionStreamChoice{{Index: 0, Delta: delta, FinishReason: finish}}}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if !send(openai.ChatCompletionStreamChoiceDelta{Role: "assistant"}, "") {
		return
	}
	for i, d := range sc.Deltas {
		if sc.Malformed && i == len(sc.Deltas)/2 {
			fmt.Fprint(w, "data: {\"id\":\"broken\",\"choices\":[{\"delta\":{\"content\":\n\n")
			if fl != nil {
				fl.Flush()
			}
			return
		}
		if !send(openai.ChatCompletionStreamChoiceDelta{Content: d}, "") {
			return
		}
	}
	// Tool calls: the first chunk of each carries id and name, then the
	// arguments arrive in pieces, interleaved between parallel calls.
	parts := make([][]string, len(sc.Calls))
	for i, c := range sc.Calls {
		idx := i
		if !send(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{{Index: &idx, ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name}}}}, "") {
			return
		}
		parts[i] = split(c.Args, 3)
	}
	for k := 0; k < 3; k++ {
		for i := range sc.Calls {
			if k >= len(parts[i]) {
				continue
			}
			idx := i
			if !send(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{{Index: &idx,
				Function: openai.FunctionCall{Arguments: parts[i][k]}}}}, "") {
				return
			}
		}
	}
	if sc.Truncate {
		return
	}
	if !send(openai.ChatCompletionStreamChoiceDelta{}, finish) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		b, _ := json.Marshal(openai.ChatCompletionStreamResponse{ID: id, Object: "chat.completion.chunk", Model: req.Model,
			Choices: []openai.ChatCompletionStreamChoice{}, Usage: usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func (o *OpenAI) writeWhole(w http.ResponseWriter, id, model string, sc Script, finish openai.FinishReason, usage *openai.Usage) {
	msg := openai.ChatCompletionMessage{Role: "assistant", Content: strings.Join(sc.Deltas, "")}
	for _, c := range sc.Calls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.Name, Arguments: c.Args}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(openai.ChatCompletionResponse{ID: id, Object: "chat.completion", Model: model,
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: finish}}, Usage: *usage})
}

func (o *OpenAI) model() string {
	if o.Model == "" {
		return "test-model"
	}
	return o.Model
}

// MaxPromptTokens returns the largest prompt received, in tokens
// (CountTokens), and how many requests passed ContextLimit.
func (o *OpenAI) MaxPromptTokens() (largest, overflows int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.maxPrompt, o.overflows
}

// TextTokens is the peer's token count of a text: four bytes a token,
// rounded up (what tokenizers average on English).
func TextTokens(s string) int { return (len(s) + 3) / 4 }

// CountTokens is the peer's count of a request's prompt, the way chat
// templates add up: each message's text and tool calls plus a few tokens
// of framing, and the tool schemas.
func CountTokens(req openai.ChatCompletionRequest) int {
	n := 3
	for _, m := range req.Messages {
		n += 4 + TextTokens(m.Content) + TextTokens(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += 4 + TextTokens(tc.Function.Name) + TextTokens(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		b, _ := json.Marshal(t)
		n += TextTokens(string(b))
	}
	return n
}

// split cuts s into at most n non-empty pieces.
func split(s string, n int) []string {
	if len(s) < n {
		return []string{s}
	}
	step := len(s) / n
	var out []string
	for i := 0; i < n-1; i++ {
		out = append(out, s[i*step:(i+1)*step])
	}
	return append(out, s[(n-1)*step:])
}

// carriesToolImages: m is the user message the service adds after tool
// results to carry their images (llm.ToolImagesNote, then the images), not
// a message the user wrote (one that follows a turn stopped at its tool
// results, for instance).
func carriesToolImages(m openai.ChatCompletionMessage) bool {
	return len(m.MultiContent) > 0 && m.MultiContent[0].Type == openai.ChatMessagePartTypeText &&
		strings.HasPrefix(m.MultiContent[0].Text, llm.ToolImagesNote)
}

var directive = regexp.MustCompile(`\[\[(\w+)(?:\s+([^\s\]]+))?(?:\s+(\{.*?\}))?\]\]`)

// Directives builds the script for a request from the directives in its last
// user message, or a reply to tool results when the last message is one.
func Directives(req openai.ChatCompletionRequest) Script {
	if len(req.Messages) == 0 {
		return Script{Deltas: []string{"Hello."}}
	}
	last := req.Messages[len(req.Messages)-1]
	end := len(req.Messages) - 1
	if n := len(req.Messages); last.Role == openai.ChatMessageRoleUser && n > 1 && req.Messages[n-2].Role == openai.ChatMessageRoleTool && carriesToolImages(last) {
		// The images of the tool results before it: still an answer to them.
		end, last = n-2, req.Messages[n-2]
	}
	if last.Role == openai.ChatMessageRoleTool {
		var results []string
		for i := end; i >= 0 && req.Messages[i].Role == openai.ChatMessageRoleTool; i-- {
			results = append([]string{req.Messages[i].Content}, results...)
		}
		return Script{Deltas: words("Tool results: " + strings.Join(results, "; "))}
	}
	text := last.Content
	var sc Script
	ms := directive.FindAllStringSubmatch(text, -1)
	for _, m := range ms {
		switch m[1] {
		case "tool":
			args := m[3]
			if args == "" {
				args = "{}"
			}
			sc.Calls = append(sc.Calls, Call{ID: fmt.Sprintf("call_%d_%s", len(sc.Calls), m[2]), Name: m[2], Args: args})
		case "deltas":
			n, _ := strconv.Atoi(m[2])
			sc.Deltas = append(sc.Deltas, numbered(n)...)
		case "slow":
			ms, _ := strconv.Atoi(m[2])
			sc.Delay = time.Duration(ms) * time.Millisecond
		case "status":
			sc.Status, _ = strconv.Atoi(m[2])
		case "hang":
			sc.Hang = true
		case "malformed":
			sc.Malformed = true
			if len(sc.Deltas) < 2 {
				sc.Deltas = append(sc.Deltas, "a", "b")
			}
		case "truncate":
			sc.Truncate = true
		}
	}
	if len(req.Tools) == 0 && len(sc.Calls) > 0 {
		// A request that offers no tool (a summarizer's) gets no call, as
		// from a real model: the directive is only quoted text there.
		sc.Calls = nil
	}
	if len(sc.Deltas) == 0 && len(sc.Calls) == 0 {
		sc.Deltas = words("You said: " + strings.TrimSpace(directive.ReplaceAllString(text, "")))
	}
	return sc
}

// HasImages says whether req carries an image part.
func HasImages(req openai.ChatCompletionRequest) bool {
	for _, m := range req.Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL {
				return true
			}
		}
	}
	return false
}

var numberedCache sync.Map // int → []string

// numbered returns the deltas "w0 " … "w(n-1) ", built once per n: a
// benchmark's flood starts streaming without first building its script.
func numbered(n int) []string {
	if d, ok := numberedCache.Load(n); ok {
		return d.([]string)
	}
	d := make([]string, n)
	for i := range d {
		d[i] = "w" + strconv.Itoa(i) + " "
	}
	numberedCache.Store(n, d)
	return d
}

// words splits text into deltas of one word and its trailing space.
func words(text string) []string {
	var out []string
	for _, w := range strings.SplitAfter(text, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
