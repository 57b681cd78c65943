package service_test

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
)

// TestFinalCarriesUsage: a turn's assistant.final carries the token counts
// the model server reported for all its requests (here a tool round and
// the answer) and the context window the turn was planned for.
func TestFinalCarriesUsage(t *testing.T) {
	e := newEnv(t)
	e.upstream.Respond = func(r openai.ChatCompletionRequest) testpeer.Script {
		if r.Messages[len(r.Messages)-1].Role == openai.ChatMessageRoleUser {
			return testpeer.Script{Calls: []testpeer.Call{{ID: "c1", Name: "notify", Args: `{"title":"x"}`}}}
		}
		return testpeer.Script{Deltas: []string{"done ", "here"}}
	}
	sid := e.session("j-usage")
	var got collect
	err := e.c.ChatStream(context.Background(), sid, "count me", func(ev api.StreamEvent) error {
		got.add(ev)
		e.answerTools(sid, func(api.ToolCall) api.ToolResult { return api.ToolResult{OK: true, Result: "shown"} })(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	finals := eventsOf[api.TextEvent](got.all(), api.EventFinal)
	if len(finals) != 1 || finals[0].Usage == nil {
		t.Fatalf("finals %+v, want one with usage", finals)
	}
	reqs := e.upstream.Requests()
	prompt := 0
	for _, r := range reqs {
		prompt += testpeer.CountTokens(r)
	}
	last := testpeer.CountTokens(reqs[len(reqs)-1])
	completion := 4 + testpeer.TextTokens("notify") + testpeer.TextTokens(`{"title":"x"}`) + testpeer.TextTokens("done ") + testpeer.TextTokens("here")
	want := api.ReplyUsage{PromptTokens: prompt, CompletionTokens: completion, Requests: 2,
		ContextTokens: last + testpeer.TextTokens("done ") + testpeer.TextTokens("here"), ContextWindow: finals[0].Usage.ContextWindow}
	if len(reqs) != 2 || *finals[0].Usage != want {
		t.Fatalf("%d requests; usage %+v, want %+v", len(reqs), *finals[0].Usage, want)
	}
	var info api.SessionDetail
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid, nil, &info); err != nil {
		t.Fatal(err)
	}
	if info.Context == nil || info.Context.Window != finals[0].Usage.ContextWindow || info.Context.Window == 0 {
		t.Fatalf("context window: session says %+v, final says %d", info.Context, finals[0].Usage.ContextWindow)
	}
}
