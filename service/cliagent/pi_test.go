package cliagent

import (
	"errors"
	"slices"
	"testing"
)

// A turn as `pi --mode json` prints it: delta-only message_update records,
// the authoritative message in message_end.
const piToolTurn = `{"type":"session","version":3,"id":"5f1c2a8e-0000-4000-8000-444455556666","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}
{"type":"agent_start"}
{"type":"turn_start"}
{"type":"message_start","message":{"role":"user","content":[{"type":"text","text":"List files"}],"timestamp":1}}
{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"List files"}],"timestamp":1}}
{"type":"message_start","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0},"stopReason":"stop","timestamp":2}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"thinking_start","contentIndex":0}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"thinking_delta","contentIndex":0,"delta":"Need ls."}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"thinking_end","contentIndex":0,"content":"Need ls."}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_start","contentIndex":1}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_delta","contentIndex":1,"delta":"Let me "}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_delta","contentIndex":1,"delta":"look."}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_end","contentIndex":1,"content":"Let me look."}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"toolcall_start","contentIndex":2,"id":"call_1","toolName":"bash"}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"toolcall_delta","contentIndex":2,"delta":"{\"command\":\"ls\"}"}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"toolcall_end","contentIndex":2,"toolCall":{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Need ls."},{"type":"text","text":"Let me look."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}],"usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"input":0.25,"output":0.25,"total":0.5}},"stopReason":"toolUse","timestamp":3}}
{"type":"tool_execution_start","toolCallId":"call_1","toolName":"bash","args":{"command":"ls"}}
@sleep 0.2
{"type":"tool_execution_update","toolCallId":"call_1","toolName":"bash","args":{"command":"ls"},"partialResult":{"content":[{"type":"text","text":"a.go"}]}}
{"type":"tool_execution_end","toolCallId":"call_1","toolName":"bash","result":{"content":[{"type":"text","text":"a.go"}]},"isError":false}
{"type":"message_start","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"a.go"}],"isError":false}}
{"type":"message_end","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"a.go"}],"isError":false}}
{"type":"turn_end","message":{"role":"assistant","content":[]},"toolResults":[]}
{"type":"turn_start"}
{"type":"message_start","message":{"role":"assistant","content":[],"stopReason":"stop"}}
{"type":"message_update","usage":{"input":0,"output":0},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"One file: a.go."}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"One file: a.go."}],"usage":{"input":130,"output":10,"totalTokens":140,"cost":{"total":0.25}},"stopReason":"stop"}}
{"type":"turn_end","message":{"role":"assistant","content":[]},"toolResults":[]}
{"type":"agent_end","messages":[],"willRetry":false}
{"type":"agent_settled"}`

func TestPiToolTurn(t *testing.T) {
	t.Parallel()
	f := newFake(t, piToolTurn)
	res, rec, err := run(t, f.runner(KindPi, nil), Request{Prompt: "List files"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.argv(1), []string{"--mode", "json", "--tools", "read,grep,find,ls", "List files"}; !slices.Equal(got, want) {
		t.Errorf("argv = %q, want %q", got, want)
	}
	wantText := []string{"Let me ", "look.", "\n\nOne file: a.go."}
	if got := rec.text(); !slices.Equal(got, wantText) {
		t.Errorf("text deltas = %q, want %q", got, wantText)
	}
	if res.Text != "Let me look.\n\nOne file: a.go." || res.Thinking != "Need ls." {
		t.Errorf("Text = %q, Thinking = %q", res.Text, res.Thinking)
	}
	if res.ResumeID != "5f1c2a8e-0000-4000-8000-444455556666" {
		t.Errorf("ResumeID = %q", res.ResumeID)
	}
	wantSeq := []string{"thinking", "text", "text", "start:bash", "end:bash", "text"}
	if got := rec.sequence(); !slices.Equal(got, wantSeq) {
		t.Errorf("events = %q, want %q", got, wantSeq)
	}
	if len(res.ToolCalls) != 1 {
		t.Fatalf("ToolCalls = %+v", res.ToolCalls)
	}
	if c := res.ToolCalls[0]; c.ID != "call_1" || c.Name != "bash" || string(c.Input) != `{"command":"ls"}` ||
		c.DurationMs < 150 || c.DurationMs > 5000 {
		t.Errorf("tool call = %+v", c)
	}
	// Per-message usage is summed over the turn.
	want := map[string]any{"input": 230.0, "output": 30.0, "cacheRead": 0.0, "cacheWrite": 0.0, "totalTokens": 260.0,
		"cost": map[string]any{"input": 0.25, "output": 0.25, "total": 0.75}}
	if !jsonEqual(res.Usage, want) {
		t.Errorf("Usage = %v, want %v", res.Usage, want)
	}
}

func TestPiResumeArgs(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"session","version":3,"id":"sess-pi","cwd":"/w"}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop"}}`)
	r := f.runner(KindPi, func(o *Options) { o.Model = "sonnet:high"; o.ExtraArgs = []string{"--thinking", "high"} })
	first, _, err := run(t, r, Request{Prompt: "@notes.md what's here?", SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, r, Request{Prompt: "and now?", SystemPrompt: "Be brief.", ResumeID: first.ResumeID}); err != nil {
		t.Fatal(err)
	}
	// pi reads a leading "@" as a file to attach: the prompt gets a space.
	if got, want := f.argv(1), []string{"--mode", "json", "--append-system-prompt", "Be brief.", "--tools", "read,grep,find,ls", "--model", "sonnet:high", "--thinking", "high", " @notes.md what's here?"}; !slices.Equal(got, want) {
		t.Errorf("first argv = %q, want %q", got, want)
	}
	if got, want := f.argv(2), []string{"--mode", "json", "--session", "sess-pi", "--append-system-prompt", "Be brief.", "--tools", "read,grep,find,ls", "--model", "sonnet:high", "--thinking", "high", "and now?"}; !slices.Equal(got, want) {
		t.Errorf("resume argv = %q, want %q", got, want)
	}
}

// Without message_update deltas the message_end content is the text.
func TestPiUnstreamedMessage(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"message_start","message":{"role":"assistant","content":[]}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hi "},{"type":"text","text":"there."}],"stopReason":"stop"}}
{"type":"agent_end","messages":[]}`)
	res, rec, err := run(t, f.runner(KindPi, nil), Request{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.text(); !slices.Equal(got, []string{"Hi ", "there."}) || res.Text != "Hi there." || res.Thinking != "hm" {
		t.Errorf("deltas %q, Result %+v", got, res)
	}
}

func TestPiErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		transcript string
		wantErr    bool
		wantCode   int
		wantMsg    string
	}{
		{
			name: "assistant stopped with error",
			transcript: `{"type":"session","id":"s"}
{"type":"message_start","message":{"role":"assistant","content":[]}}
{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"429 rate limited"}}
{"type":"agent_end","messages":[]}`,
			wantErr: true,
			wantMsg: "429 rate limited",
		},
		{
			name: "error then a successful retry",
			transcript: `{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded"}}
{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":10,"errorMessage":"overloaded"}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"fine"}],"stopReason":"stop"}}
{"type":"auto_retry_end","success":true,"attempt":1}`,
		},
		{
			name:       "no API key",
			transcript: "@stderr No API key found for anthropic.\n@exit 1",
			wantErr:    true,
			wantCode:   1,
			wantMsg:    "No API key found for anthropic.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.transcript)
			_, _, err := run(t, f.runner(KindPi, nil), Request{Prompt: "hi"})
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v, want *ExitError", err)
			}
			if ee.Kind != KindPi || ee.Code != tt.wantCode || ee.Message != tt.wantMsg {
				t.Errorf("ExitError = %+v, want code %d message %q", ee, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
