package llm

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// The body that reaches the model server is the one go-openai would have
// built from the whole request: system message first, tools included, for
// every combination, each request with its own parts.
func TestRequestBodyIsGoOpenAIs(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		if r.ContentLength != int64(len(b)) {
			t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(b))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	p := NewOpenAI(OpenAIOptions{BaseURL: up.URL + "/v1"})

	read := ToolSpec{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object", "properties": {"path": {"type":"string"}}, "required":["path"]}`)}
	notify := ToolSpec{Name: "notify", Description: "Show a notification <b>now</b> & then.", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}
	changed := notify
	changed.Description = "Show a notification."
	system := Message{Role: "system", Content: "You are Jarvis. \"Quotes\", <tags> & \"messages\":[ in text."}
	user := Message{Role: "user", Content: `hi "messages":[`}
	answer := Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "notify", Arguments: `{"title":"x"}`}}}
	result := Message{Role: "tool", Content: "done", ToolCallID: "c1"}
	reqs := []Request{
		{Messages: []Message{system, user}, Tools: []ToolSpec{read, notify}},
		{Messages: []Message{system, user}, Tools: []ToolSpec{read, notify}},
		{Messages: []Message{system, user, answer, result}, Tools: []ToolSpec{notify}},
		{Messages: []Message{{Role: "system", Content: "Another prompt."}, user}, Tools: []ToolSpec{read, changed}},
		{Messages: []Message{system}},
		{Messages: []Message{user}, Tools: []ToolSpec{read}},
		{Messages: []Message{user}},
	}
	for _, r := range reqs {
		r.Model = "m"
		rep, err := p.Stream(context.Background(), r, func(string) {})
		if err != nil || rep.Text != "ok" {
			t.Fatalf("stream: %+v %v", rep, err)
		}
	}
	if len(bodies) != len(reqs) {
		t.Fatalf("%d requests, want %d", len(bodies), len(reqs))
	}
	for i, r := range reqs {
		// What go-openai sends for the whole request, encoded by itself.
		direct := openai.ChatCompletionRequest{Model: "m", Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
		for _, m := range r.Messages {
			direct.Messages = append(direct.Messages, openaiMessage(m))
		}
		for _, s := range r.Tools {
			direct.Tools = append(direct.Tools, openaiTool(s))
		}
		b, _ := json.Marshal(direct)
		var got, want any
		if err := json.Unmarshal(bodies[i], &got); err != nil {
			t.Fatalf("request %d is not JSON: %v\n%s", i, err, bodies[i])
		}
		json.Unmarshal(b, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d:\n got %s\nwant %s", i, bodies[i], b)
		}
	}
}

// The encoded parts are kept by content: a caller that changes its slices
// afterwards gets the new content, never the old encoding.
func TestStaticCacheFollowsContent(t *testing.T) {
	c := staticCache{seed: maphash.MakeSeed(), parts: map[uint64][]*staticParts{}}
	params := []byte(`{"type":"object"}`)
	specs := []ToolSpec{{Name: "a", Parameters: params}}
	first, err := c.encode("sys", specs)
	if err != nil {
		t.Fatal(err)
	}
	copy(params, `{"type":"string"}`)
	second, _ := c.encode("sys", specs)
	if string(first.toolsJSON) == string(second.toolsJSON) {
		t.Fatalf("the changed schema was not encoded again: %s", second.toolsJSON)
	}
	again, _ := c.encode("sys", []ToolSpec{{Name: "a", Parameters: []byte(`{"type":"object"}`)}})
	if again != first {
		t.Fatalf("the same content was encoded again")
	}
	if other, _ := c.encode("sys2", []ToolSpec{{Name: "a", Parameters: []byte(`{"type":"object"}`)}}); string(other.systemJSON) == string(first.systemJSON) {
		t.Fatalf("another system prompt got the first one's encoding")
	}
	for i := 0; i < maxStatic+1; i++ {
		c.encode(string(rune('a'+i)), nil)
	}
	if c.n > maxStatic {
		t.Fatalf("%d sets kept, at most %d", c.n, maxStatic)
	}
}
