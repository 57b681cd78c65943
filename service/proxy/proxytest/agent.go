// Package proxytest provides a scripted external agent that speaks the
// Agent Protocol (docs/protocols/proxy-agents.md), for the proxy package's tests, the benchmarks and
// the service's end-to-end tests. It is a real HTTP handler meant to run
// in httptest.NewServer.
//
// Routes (all answer "echo: <input text>"):
//
//	POST /sync             one Agent Protocol response
//	POST /async            202 acknowledgement, then POSTs two partial
//	                       responses and a final one (sessionInfo.output)
//	                       to the request's callbackUrl
//	POST /sse, /ndjson     the answer streamed as three partial messages
//	                       and a final one, as SSE or NDJSON
//	POST /malformed        truncated JSON
//	ANY  /status/{code}    that status with a JSON error body
//	ANY  /slow             answers only when the request is abandoned
//	ANY  /big?bytes=N      a valid response of about N bytes (add
//	                       &length=1 to send Content-Length)
//	ANY  /redirect         302 to /target
//	ANY  /target           like /sync (a test asserts it is never hit)
//	POST /custom           non-conforming: takes {"query", "conversation"},
//	                       answers {"data":{"reply":{"text"}},"meta":{...}}
//	POST /openai           answers an OpenAI chat-completion shape
//
// Every request is recorded (Requests, Hits).
//
// # Concurrency
//
// An *Agent is safe for concurrent use. Set its exported fields before the
// server starts. Close waits for the async callbacks in flight.
package proxytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"jarvis/service/proxy"
)

// Agent is the scripted agent.
type Agent struct {
	// ChunkDelay is slept before each streamed message and each callback.
	ChunkDelay time.Duration
	// Hold, if not nil, is waited on by /sse and /ndjson after the partial
	// messages and before the final one, so that a test can prove the
	// partials arrived while the stream was still open.
	Hold chan struct{}
	// Client posts async callbacks; nil means a plain http.Client.
	Client *http.Client

	mu       sync.Mutex
	requests []Request
	wg       sync.WaitGroup
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Requests returns the recorded requests in arrival order.
func (a *Agent) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// Hits counts the recorded requests to path.
func (a *Agent) Hits(path string) int {
	n := 0
	for _, r := range a.Requests() {
		if r.Path == path {
			n++
		}
	}
	return n
}

// Close waits for pending async callbacks.
func (a *Agent) Close() { a.wg.Wait() }

// Answer is what the agent answers to text.
func Answer(text string) string { return "echo: " + text }

// parts are the streamed pieces of Answer(text); joined they equal it.
func parts(text string) []string { return []string{"echo", ": ", text} }

// Handler returns the agent's routes.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sync", a.sync)
	mux.HandleFunc("/target", a.sync)
	mux.HandleFunc("POST /async", a.async)
	mux.HandleFunc("POST /sse", a.stream)
	mux.HandleFunc("POST /ndjson", a.stream)
	mux.HandleFunc("POST /malformed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"messageId":"m1","output":[{"type":"text","content":"cut`)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 100 || code > 999 {
			code = 500
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":"scripted failure %d","detail":%q}`, code, strings.Repeat("x", 2000))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		body := fmt.Sprintf(`{"output":[{"type":"text","content":%q}]}`, strings.Repeat("a", max(n-40, 1)))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("length") != "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		for b := []byte(body); len(b) > 0; {
			k := min(len(b), 32<<10)
			w.Write(b[:k])
			b = b[k:]
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("POST /custom", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Query        string         `json:"query"`
			Conversation string         `json:"conversation"`
			Context      map[string]any `json:"context"`
		}
		if err := json.Unmarshal(body(r), &in); err != nil || in.Query == "" {
			http.Error(w, `{"error":"expected {query, conversation}"}`, http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{
			"data": map[string]any{"reply": map[string]any{"text": Answer(in.Query)}},
			"meta": map[string]any{"state": "done", "conversation": in.Conversation,
				"reasoning": []any{map[string]any{"text": "looked it up"}, "answered"}},
		})
	})
	mux.HandleFunc("POST /openai", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"id":      "chatcmpl-1",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": Answer(inputText(body(r)))}}},
		})
	})
	return a.record(mux)
}

// record stores each request and restores its body for the route.
func (a *Agent) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(b))
		a.mu.Lock()
		a.requests = append(a.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: b})
		a.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func body(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

func decodeRequest(b []byte) proxy.AgentRequest {
	var req proxy.AgentRequest
	_ = json.Unmarshal(b, &req)
	return req
}

func inputText(b []byte) string { return textOf(decodeRequest(b)) }

// textOf is the request's input text.
func textOf(req proxy.AgentRequest) string {
	var s strings.Builder
	for _, p := range req.Input {
		s.WriteString(p.Content)
	}
	return s.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Final is the agent's complete response to req.
func Final(req proxy.AgentRequest) proxy.AgentResponse {
	resp := proxy.AgentResponse{
		MessageID: "msg-final",
		Output:    []proxy.Part{{Type: "text", Content: Answer(textOf(req))}},
		SessionInfo: &proxy.SessionInfo{
			Status: proxy.StatusIdle, ConversationState: proxy.StateCompleted,
			SessionReference: ref(req, "sessionReference"), UserReference: ref(req, "userReference"),
		},
	}
	if req.Debug != nil && req.Debug.Enable {
		resp.Debug = []proxy.Part{{Type: "thought", Content: "Analyzing the query..."}, {Type: "thought", Content: "Processing data..."}}
	}
	return resp
}

func ref(req proxy.AgentRequest, typ string) string {
	for _, id := range req.SessionIdentity {
		if id.Type == typ {
			return id.Value
		}
	}
	return ""
}

// Partials are the messages a streaming or async agent sends for req: one
// per part of the answer (status busy, ACTIVE), then the final one carrying
// the stitched whole under sessionInfo.output and no output[] of its own.
func Partials(req proxy.AgentRequest) []proxy.AgentResponse {
	final := Final(req)
	var out []proxy.AgentResponse
	for i, p := range parts(textOf(req)) {
		out = append(out, proxy.AgentResponse{
			MessageID: fmt.Sprintf("msg-%d", i),
			Output:    []proxy.Part{{Type: "text", Content: p}},
			Debug:     []proxy.Part{{Type: "thought", Content: fmt.Sprintf("part %d", i)}},
			SessionInfo: &proxy.SessionInfo{Status: proxy.StatusBusy, ConversationState: proxy.StateActive,
				SessionReference: final.SessionInfo.SessionReference},
		})
	}
	info := *final.SessionInfo
	info.Output = &final.Output[0]
	out = append(out, proxy.AgentResponse{MessageID: final.MessageID, SessionInfo: &info})
	return out
}

func (a *Agent) sync(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, Final(decodeRequest(body(r))))
}

func (a *Agent) stream(w http.ResponseWriter, r *http.Request) {
	msgs := Partials(decodeRequest(body(r)))
	sse := r.URL.Path == "/sse"
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	fl, _ := w.(http.Flusher)
	for i, m := range msgs {
		if i == len(msgs)-1 && a.Hold != nil {
			select {
			case <-a.Hold:
			case <-r.Context().Done():
				return
			}
		}
		if a.ChunkDelay > 0 {
			time.Sleep(a.ChunkDelay)
		}
		b, _ := json.Marshal(m)
		if sse {
			fmt.Fprintf(w, ": part %d\nevent: message\nid: %d\ndata: %s\n\n", i, i, b)
		} else {
			fmt.Fprintf(w, "%s\n", b)
		}
		if fl != nil {
			fl.Flush()
		}
	}
	if sse {
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

func (a *Agent) async(w http.ResponseWriter, r *http.Request) {
	req := decodeRequest(body(r))
	if req.CallbackURL == "" {
		http.Error(w, `{"error":"callbackUrl required"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"messageId":"ack-1","sessionInfo":{"status":"busy","conversationState":"ACTIVE"}}`)
	hc := a.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for _, m := range Partials(req) {
			if a.ChunkDelay > 0 {
				time.Sleep(a.ChunkDelay)
			}
			b, _ := json.Marshal(m)
			res, err := hc.Post(req.CallbackURL, "application/json", bytes.NewReader(b))
			if err != nil {
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
}
