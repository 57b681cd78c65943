package service_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
)

// TestSearchSessionsAPI finds conversations by what was said in them,
// through the real service: a word of the model's reply finds its session
// with a snippet, a word of the user's message too, a deleted session is
// not found, and a missing or oversized q is a 400 in the error envelope.
func TestSearchSessionsAPI(t *testing.T) {
	e := newEnv(t)
	e.upstream.Respond = func(req openai.ChatCompletionRequest) testpeer.Script {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "bread") {
			return testpeer.Script{Deltas: []string{"Knead the dough, then let the sourdough rise overnight."}}
		}
		return testpeer.Script{Deltas: []string{"Tram 28 crosses the old town."}}
	}
	ctx := context.Background()
	bread, trip := e.session("j-bread"), e.session("j-trip")
	for sid, text := range map[string]string{bread: "How do I bake bread?", trip: "What to see in Lisbon?"} {
		if _, err := e.c.Chat(ctx, sid, text); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q string) api.SessionSearch {
		t.Helper()
		var out api.SessionSearch
		if code, eb := doJSON(t, e, http.MethodGet, "/v1/sessions/search?q="+url.QueryEscape(q), "", &out); code != http.StatusOK {
			t.Fatalf("%q: %d %+v", q, code, eb)
		}
		return out
	}
	got := search("SOURDOUGH")
	if len(got.Results) != 1 || got.Results[0].Session.SessionID != bread || got.Results[0].Role != "assistant" || !strings.Contains(got.Results[0].Snippet, "sourdough rise") {
		t.Fatalf("sourdough: %+v", got)
	}
	if got := search("lisbon"); len(got.Results) != 1 || got.Results[0].Session.SessionID != trip || got.Results[0].Role != "user" {
		t.Fatalf("lisbon: %+v", got)
	}
	if got := search("nothing like this"); got.Results == nil || len(got.Results) != 0 {
		t.Fatalf("no match must be an empty list: %+v", got)
	}
	if err := e.c.Do(ctx, http.MethodDelete, "/v1/sessions/"+bread, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := search("sourdough"); len(got.Results) != 0 {
		t.Fatalf("deleted session found: %+v", got)
	}
	for q, code := range map[string]string{"": "missing_field", strings.Repeat("a", 257): "invalid_field"} {
		if status, eb := doJSON(t, e, http.MethodGet, "/v1/sessions/search?q="+url.QueryEscape(q), "", nil); status != http.StatusBadRequest || eb.Error.Code != code {
			t.Fatalf("q=%.10q: %d %+v", q, status, eb)
		}
	}
	if status, eb := doJSON(t, e, http.MethodGet, "/v1/sessions/search?q=tram&limit=0", "", nil); status != http.StatusBadRequest || eb.Error.Code != "invalid_field" {
		t.Fatalf("limit=0: %d %+v", status, eb)
	}
}
