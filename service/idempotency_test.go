package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"jarvis/api"
)

// postKeyed sends a JSON POST with an Idempotency-Key and returns the status and body.
func (e *env) postKeyed(path, key string, body any) (int, []byte) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func chatBody(sid, text string, stream bool) api.ChatRequest {
	return api.ChatRequest{GeneralSessionID: sid, Mode: "general", Stream: stream, Message: api.Message{Parts: []api.MessagePart{{Type: "text", Text: text}}}}
}

func userMessages(tr []api.TranscriptMessage) int {
	n := 0
	for _, m := range tr {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// TestChatIdempotencyKeyReplay: a chat message sent again with the same
// Idempotency-Key (a client retrying after its connection died) gets the
// first request's turn and reply, concurrently or after it ended, streamed
// or not, and never starts a second turn.
func TestChatIdempotencyKeyReplay(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-idem")
	body := chatBody(sid, "[[slow 20]] [[deltas 10]]", false)
	var wg sync.WaitGroup
	answers := make([]api.ChatResponse, 3)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, b := e.postKeyed("/v1/chat", "key-1", body)
			if st != 200 {
				t.Errorf("attempt %d: %d %s", i, st, b)
				return
			}
			json.Unmarshal(b, &answers[i])
		}()
	}
	wg.Wait()
	st, b := e.postKeyed("/v1/chat", "key-1", body) // after the turn ended
	var late api.ChatResponse
	json.Unmarshal(b, &late)
	if st != 200 {
		t.Fatalf("late replay: %d %s", st, b)
	}
	for i, a := range append(answers, late) {
		if a.TurnID == "" || a.TurnID != answers[0].TurnID || a.Assistant.Text() != answers[0].Assistant.Text() {
			t.Fatalf("answer %d = %+v, want the first one %+v", i, a, answers[0])
		}
	}
	// The streamed replay is the same turn's events, from its user.message
	// to its end, after the stream's retry field.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat", bytes.NewReader(must(json.Marshal(chatBody(sid, "[[slow 20]] [[deltas 10]]", true)))))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "key-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sse, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasPrefix(sse, []byte("retry: 1000\n")) || bytes.Count(sse, []byte("event: user.message\n")) != 1 ||
		bytes.Count(sse, []byte("event: assistant.final\n")) != 1 || !bytes.Contains(sse, []byte(`"turn_id":"`+answers[0].TurnID+`"`)) {
		t.Fatalf("streamed replay:\n%s", sse)
	}
	if n := userMessages(e.transcript(sid)); n != 1 {
		t.Fatalf("%d user messages stored, want 1", n)
	}
	if n := len(e.upstream.Requests()); n != 1 {
		t.Fatalf("the model was called %d times, want 1", n)
	}
	// A new key is a new message.
	if st, b := e.postKeyed("/v1/chat", "key-2", body); st != 200 {
		t.Fatalf("new key: %d %s", st, b)
	}
	if n := userMessages(e.transcript(sid)); n != 2 {
		t.Fatalf("%d user messages stored, want 2", n)
	}
	// The same key for another message is refused, not replayed.
	if st, b := e.postKeyed("/v1/chat", "key-2", chatBody(sid, "something else", false)); st != http.StatusConflict || !bytes.Contains(b, []byte("idempotency_key_reused")) {
		t.Fatalf("reused key: %d %s", st, b)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestToolResultIdempotencyKeyReplay: a tool result sent again with the same
// key is answered as the first one was (accepted), and the turn gets one
// result; without a key, the second is a duplicate (409).
func TestToolResultIdempotencyKeyReplay(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-idem-tool")
	var got collect
	var replies []int
	err := e.c.ChatStream(context.Background(), sid, `[[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		got.add(ev)
		if ev.Type != api.EventToolRequest {
			return nil
		}
		tc := decode[api.ToolCall](t, ev.Data)
		res := api.ToolResultRequest{GeneralSessionID: sid, ToolResult: api.ToolResult{ID: tc.ID, OK: true, Result: "shown"}}
		for i := 0; i < 2; i++ {
			st, _ := e.postKeyed("/v1/tools/result", "tr-1", res)
			replies = append(replies, st)
		}
		st, b := e.postKeyed("/v1/tools/result", "tr-2", res)
		if st != http.StatusConflict || !bytes.Contains(b, []byte("tool_result_duplicate")) {
			t.Errorf("a second result under a new key: %d %s", st, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 2 || replies[0] != 200 || replies[1] != 200 {
		t.Fatalf("statuses %v, want 200 200", replies)
	}
	n := 0
	for _, ev := range got.all() {
		if ev.Type == api.EventToolResult {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d tool.result events, want 1", n)
	}
}
