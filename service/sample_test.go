package service_test

import (
	"context"
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
)

// TestSampleRoute: POST /v1/sessions/{id}/sample previews the model it
// would use; run during a turn (while a tool call waits, as an MCP server
// samples), it answers with the agent's model and the turn's usage counts
// it; bad input and a session with no turn running get plain errors.
func TestSampleRoute(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-sample")
	ctx := context.Background()
	path := "/v1/sessions/" + sid + "/sample"
	msgs := []api.SampleMessage{{Role: "user", Text: "say hi"}}

	var pv api.SampleResponse
	if err := e.c.Do(ctx, "POST", path, api.SampleRequest{Messages: msgs, Preview: true}, &pv); err != nil || pv.Model != "test-model" || pv.AgentID != "general" || pv.Text != "" {
		t.Fatalf("preview %+v %v", pv, err)
	}
	for _, tc := range []struct {
		body   api.SampleRequest
		status int
		code   string
	}{
		{api.SampleRequest{Messages: msgs}, 409, "no_running_turn"},
		{api.SampleRequest{}, 400, "missing_field"},
		{api.SampleRequest{Messages: []api.SampleMessage{{Role: "system", Text: "x"}}}, 400, "invalid_field"},
		{api.SampleRequest{Messages: msgs, MaxTokens: -1}, 400, "invalid_field"},
	} {
		var se *api.StatusError
		if err := e.c.Do(ctx, "POST", path, tc.body, nil); !errors.As(err, &se) || se.Status != tc.status || se.Err.Code != tc.code {
			t.Errorf("%+v: %v, want %d %s", tc.body, err, tc.status, tc.code)
		}
	}
	if len(e.upstream.Requests()) != 0 {
		t.Fatal("a refused or previewed request reached the model")
	}

	e.upstream.Respond = func(r openai.ChatCompletionRequest) testpeer.Script {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Content == "say hi":
			return testpeer.Script{Deltas: []string{"hi ", "there"}}
		case last.Role == openai.ChatMessageRoleUser:
			return testpeer.Script{Calls: []testpeer.Call{{ID: "c1", Name: "notify", Args: `{"title":"x"}`}}}
		}
		return testpeer.Script{Deltas: []string{"done"}}
	}
	var sampled api.SampleResponse
	var final *api.TextEvent
	err := e.c.ChatStream(ctx, sid, "use a tool", func(ev api.StreamEvent) error {
		if ev.Type == api.EventToolRequest {
			if err := e.c.Do(ctx, "POST", path, api.SampleRequest{Messages: msgs, SystemPrompt: "be brief", MaxTokens: 10}, &sampled); err != nil {
				t.Errorf("sample during the turn: %v", err)
			}
		}
		if ev.Type == api.EventFinal {
			f := decode[api.TextEvent](t, ev.Data)
			final = &f
		}
		e.answerTools(sid, func(api.ToolCall) api.ToolResult { return api.ToolResult{OK: true, Result: "shown"} })(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sampled.Text != "hi there" || sampled.Model != "test-model" || sampled.StopReason != "endTurn" || sampled.Usage == nil || sampled.Usage.Requests != 1 {
		t.Fatalf("sampled %+v", sampled)
	}
	reqs := e.upstream.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d upstream requests", len(reqs))
	}
	s := reqs[1]
	if len(s.Messages) != 2 || s.Messages[0].Role != "system" || s.Messages[0].Content != "be brief" || len(s.Tools) != 0 {
		t.Fatalf("the completion's request: %+v", s.Messages)
	}
	prompt := 0
	for _, r := range reqs {
		prompt += testpeer.CountTokens(r)
	}
	if final == nil || final.Usage == nil || final.Usage.Requests != 3 || final.Usage.PromptTokens != prompt || sampled.Usage.PromptTokens != testpeer.CountTokens(s) {
		t.Fatalf("final usage %+v, want 3 requests and %d prompt tokens", final, prompt)
	}
}
