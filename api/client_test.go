package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"jarvis/api"
)

// TestPostSurvivesClosedKeptAliveConnection: a POST sent on a kept-alive
// connection that the server closes without answering is sent again on a
// new one, with the same Idempotency-Key (Go's Transport retries a POST
// only when it carries one). Without the key the client got EOF and the
// desktop lost the user's message.
func TestPostSurvivesClosedKeptAliveConnection(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"healthy":true}`)
			return
		}
		io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get(api.IdempotencyKeyHeader))
		first := len(keys) == 1
		mu.Unlock()
		if first { // the connection dies under the request, as when a parked one was closed
			c, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			c.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"accepted":true}`)
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := api.NewClient(srv.URL, "tok", &http.Client{Transport: tr})
	ctx := context.Background()
	if _, err := c.Health(ctx); err != nil { // the connection is now kept alive
		t.Fatal(err)
	}
	if err := c.PostToolResult(ctx, "s1", api.ToolResult{ID: "c1", OK: true}); err != nil {
		t.Fatalf("the POST was lost: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("attempts' Idempotency-Keys = %q, want two equal non-empty keys", keys)
	}
}

// TestEveryPostHasItsOwnKey: two messages are two requests, never one replay.
func TestEveryPostHasItsOwnKey(t *testing.T) {
	keys := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get(api.IdempotencyKeyHeader)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"assistant":{"parts":[]},"turn_id":"t"}`)
	}))
	defer srv.Close()
	c := api.NewClient(srv.URL, "tok", nil)
	for i := 0; i < 2; i++ {
		if _, err := c.Chat(context.Background(), "s1", "same text"); err != nil {
			t.Fatal(err)
		}
	}
	a, b := <-keys, <-keys
	if a == "" || a == b {
		t.Fatalf("keys %q and %q: want two different non-empty keys", a, b)
	}
}
