package cliagent

import (
	"errors"
	"slices"
	"testing"
)

// A turn as `codex exec --json` prints it.
const codexToolTurn = `{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Listing files**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
@sleep 0.2
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a.go\nb.go\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Two files. Let me fix a.go."}}
{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"completed"}}
{"type":"item.started","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":null,"error":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":null,"error":{"message":"boom"},"status":"failed"}}
{"type":"item.started","item":{"id":"item_5","type":"todo_list","items":[{"text":"fix","completed":false}]}}
{"type":"item.completed","item":{"id":"item_6","type":"error","message":"model fell back"}}
{"type":"item.completed","item":{"id":"item_7","type":"agent_message","text":"Fixed a.go."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}`

func TestCodexToolTurn(t *testing.T) {
	t.Parallel()
	f := newFake(t, codexToolTurn)
	res, rec, err := run(t, f.runner(KindCodex, nil), Request{Prompt: "List files"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.argv(1), []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "List files"}; !slices.Equal(got, want) {
		t.Errorf("argv = %q, want %q", got, want)
	}
	wantText := []string{"Two files. Let me fix a.go.", "\n\nFixed a.go."}
	if got := rec.text(); !slices.Equal(got, wantText) {
		t.Errorf("text deltas = %q, want %q", got, wantText)
	}
	if res.Text != "Two files. Let me fix a.go.\n\nFixed a.go." || res.Thinking != "**Listing files**" {
		t.Errorf("Text = %q, Thinking = %q", res.Text, res.Thinking)
	}
	if res.ResumeID != "0199a213-81c0-7800-8aa1-bbab2a035a53" {
		t.Errorf("ResumeID = %q", res.ResumeID)
	}
	wantSeq := []string{"thinking", "start:shell", "end:shell", "text", "start:apply_patch", "end:apply_patch",
		"start:mcp__docs__search", "end:mcp__docs__search", "text"}
	if got := rec.sequence(); !slices.Equal(got, wantSeq) {
		t.Errorf("events = %q, want %q", got, wantSeq)
	}
	if len(res.ToolCalls) != 3 {
		t.Fatalf("ToolCalls = %+v", res.ToolCalls)
	}
	shell, patch, mcp := res.ToolCalls[0], res.ToolCalls[1], res.ToolCalls[2]
	if string(shell.Input) != `{"command":"bash -lc ls"}` || shell.DurationMs < 150 || shell.DurationMs > 5000 || shell.IsError {
		t.Errorf("shell call = %+v", shell)
	}
	if string(patch.Input) != `{"changes":[{"kind":"update","path":"a.go"}]}` || patch.IsError {
		t.Errorf("patch call = %+v (input %s)", patch, patch.Input)
	}
	if string(mcp.Input) != `{"q":"x"}` || !mcp.IsError {
		t.Errorf("mcp call = %+v", mcp)
	}
	want := map[string]any{"input_tokens": 24763.0, "cached_input_tokens": 24448.0, "output_tokens": 122.0}
	if !jsonEqual(res.Usage, want) {
		t.Errorf("Usage = %v", res.Usage)
	}
}

// Should a release stream message text through item.updated, the growth is
// emitted as deltas and nothing twice. Early releases said item_type and
// assistant_message.
func TestCodexProgressiveItems(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"thread.started","thread_id":"th"}
{"type":"item.started","item":{"id":"m1","type":"agent_message","text":""}}
{"type":"item.updated","item":{"id":"m1","type":"agent_message","text":"Hel"}}
{"type":"item.updated","item":{"id":"m1","type":"agent_message","text":"Hello"}}
{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"Hello!"}}
{"type":"item.completed","item":{"id":"m2","item_type":"assistant_message","text":"Bye."}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`)
	res, rec, err := run(t, f.runner(KindCodex, nil), Request{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.text(), []string{"Hel", "lo", "!", "\n\nBye."}; !slices.Equal(got, want) {
		t.Errorf("text deltas = %q, want %q", got, want)
	}
	if res.Text != "Hello!\n\nBye." {
		t.Errorf("Text = %q", res.Text)
	}
}

func TestCodexResumeArgs(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"thread.started","thread_id":"th-1"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}
{"type":"turn.completed","usage":{}}`)
	r := f.runner(KindCodex, func(o *Options) { o.Model = "gpt-5"; o.ExtraArgs = []string{"--color", "never"} })
	first, _, err := run(t, r, Request{Prompt: "List files", SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, r, Request{Prompt: "-", SystemPrompt: "Be brief.", ResumeID: first.ResumeID}); err != nil {
		t.Fatal(err)
	}
	// The system prompt is prepended on a new thread only; a lone "-" (codex:
	// read stdin) is protected by a leading space.
	if got, want := f.argv(1), []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--model", "gpt-5", "--color", "never", "Be brief.\n\nList files"}; !slices.Equal(got, want) {
		t.Errorf("first argv = %q, want %q", got, want)
	}
	if got, want := f.argv(2), []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--model", "gpt-5", "--color", "never", "resume", "th-1", " -"}; !slices.Equal(got, want) {
		t.Errorf("resume argv = %q, want %q", got, want)
	}
}

func TestCodexErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		transcript string
		wantCode   int
		wantMsg    string
	}{
		{
			name: "turn.failed",
			transcript: `{"type":"thread.started","thread_id":"th"}
{"type":"turn.started"}
{"type":"error","message":"stream disconnected before completion"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}
@exit 1`,
			wantCode: 1,
			wantMsg:  "unexpected status 401 Unauthorized",
		},
		{
			name: "error event then exit",
			transcript: `{"type":"thread.started","thread_id":"th"}
{"type":"error","message":"You've hit your usage limit."}
@stderr some log line
@exit 1`,
			wantCode: 1,
			wantMsg:  "You've hit your usage limit.",
		},
		{
			name: "turn.failed without a message, exit 0",
			transcript: `{"type":"error","message":"Model metadata not found"}
{"type":"turn.failed","error":{}}`,
			wantMsg: "Model metadata not found",
		},
		{
			name:       "exit with stderr only",
			transcript: "@stderr Error: Not inside a trusted directory and --skip-git-repo-check was not specified.\n@exit 1",
			wantCode:   1,
			wantMsg:    "Error: Not inside a trusted directory and --skip-git-repo-check was not specified.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.transcript)
			_, _, err := run(t, f.runner(KindCodex, nil), Request{Prompt: "hi"})
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v, want *ExitError", err)
			}
			if ee.Kind != KindCodex || ee.Code != tt.wantCode || ee.Message != tt.wantMsg {
				t.Errorf("ExitError = %+v, want code %d message %q", ee, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

// An error event the turn recovers from is not a failure.
func TestCodexRecoveredError(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"thread.started","thread_id":"th"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}
{"type":"turn.completed","usage":{"input_tokens":1}}`)
	res, _, err := run(t, f.runner(KindCodex, nil), Request{Prompt: "hi"})
	if err != nil || res.Text != "ok" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
