package cliagent

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A turn as Claude Code prints it with --include-partial-messages: every
// text and thinking block arrives as stream_event deltas and again whole in
// an assistant line, one assistant line per content block.
const claudeToolTurn = `{"type":"system","subtype":"init","cwd":"/work","session_id":"sess-1","tools":["Bash","Read"],"model":"claude-sonnet-4-5","permissionMode":"default","apiKeySource":"none"}
{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u1"}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u2"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants "}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u3"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a file list."}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u4"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u5"}
{"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u6"}
{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"The user wants a file list.","signature":"abc"}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"sess-1","uuid":"u7"}
{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u8"}
{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me "}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u9"}
{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"look."}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u10"}
{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look."}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"sess-1","uuid":"u11"}
{"type":"stream_event","event":{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u12"}
{"type":"stream_event","event":{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u13"}
{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"sess-1","uuid":"u14"}
{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u15"}
{"type":"stream_event","event":{"type":"message_stop"},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u16"}
@sleep 0.2
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a.go\nb.go","is_error":false}]},"parent_tool_use_id":null,"session_id":"sess-1","uuid":"u17"}
{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[]}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u18"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Two files: a.go and b.go."}},"session_id":"sess-1","parent_tool_use_id":null,"uuid":"u19"}
{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":"Two files: a.go and b.go."}]},"parent_tool_use_id":null,"session_id":"sess-1","uuid":"u20"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1100,"num_turns":2,"result":"Two files: a.go and b.go.","session_id":"sess-1","total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":4,"output_tokens":20},"permission_denials":[]}`

func TestClaudeToolTurn(t *testing.T) {
	t.Parallel()
	f := newFake(t, claudeToolTurn)
	workDir := t.TempDir()
	r := f.runner(KindClaude, func(o *Options) { o.WorkDir = workDir })

	res, rec, err := run(t, r, Request{Prompt: "List files"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	wantArgv := []string{"-p", "List files", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--permission-mode", "default"}
	if got := f.argv(1); !slices.Equal(got, wantArgv) {
		t.Errorf("argv = %q, want %q", got, wantArgv)
	}
	if pwd := readFile(t, f.dir, "pwd"); strings.TrimSpace(pwd) != workDir {
		t.Errorf("CLI ran in %q, want %q", pwd, workDir)
	}
	// The assistant lines repeat the streamed text; it must not be emitted twice.
	wantText := []string{"Let me ", "look.", "\n\nTwo files: a.go and b.go."}
	if got := rec.text(); !slices.Equal(got, wantText) {
		t.Errorf("text deltas = %q, want %q", got, wantText)
	}
	if res.Text != strings.Join(wantText, "") {
		t.Errorf("Text = %q", res.Text)
	}
	if res.Thinking != "The user wants a file list." || rec.thinking() != res.Thinking {
		t.Errorf("Thinking = %q, deltas %q", res.Thinking, rec.thinking())
	}
	wantSeq := []string{"thinking", "thinking", "text", "text", "start:Bash", "end:Bash", "text"}
	if got := rec.sequence(); !slices.Equal(got, wantSeq) {
		t.Errorf("events = %q, want %q", got, wantSeq)
	}
	if res.ResumeID != "sess-1" {
		t.Errorf("ResumeID = %q", res.ResumeID)
	}
	if len(res.ToolCalls) != 1 {
		t.Fatalf("ToolCalls = %+v", res.ToolCalls)
	}
	tc := res.ToolCalls[0]
	if tc.ID != "toolu_1" || tc.Name != "Bash" || string(tc.Input) != `{"command":"ls"}` || tc.IsError {
		t.Errorf("tool call = %+v", tc)
	}
	// The script sleeps 200ms between the tool_use and its tool_result.
	if tc.DurationMs < 150 || tc.DurationMs > 5000 {
		t.Errorf("DurationMs = %d, want about 200", tc.DurationMs)
	}
	if fin := finished(rec); len(fin) != 1 || fin[0].DurationMs != tc.DurationMs {
		t.Errorf("ToolFinished events = %+v", fin)
	}
	wantUsage := map[string]any{"input_tokens": 10.0, "cache_read_input_tokens": 4.0, "output_tokens": 20.0,
		"total_cost_usd": 0.5, "num_turns": 2.0, "duration_ms": 1234.0}
	if !jsonEqual(res.Usage, wantUsage) {
		t.Errorf("Usage = %v, want %v", res.Usage, wantUsage)
	}
}

// Without partial messages (an older CLI, or the flag overridden) each
// assistant text block is one delta. A subagent's (Task tool) text is not
// the answer, but its tool use counts.
func TestClaudeWithoutPartialMessages(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"system","subtype":"init","session_id":"sess-2","tools":[]}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"I'll delegate."},{"type":"tool_use","id":"toolu_task","name":"Task","input":{"prompt":"find it"}}]},"parent_tool_use_id":null,"session_id":"sess-2"}
{"type":"assistant","message":{"id":"msg_sub","role":"assistant","content":[{"type":"text","text":"subagent chatter"},{"type":"tool_use","id":"toolu_read","name":"Read","input":{"file_path":"/x"}}]},"parent_tool_use_id":"toolu_task","session_id":"sess-2"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_read","content":"no such file","is_error":true}]},"parent_tool_use_id":"toolu_task","session_id":"sess-2"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_task","content":[{"type":"text","text":"found"}]}]},"parent_tool_use_id":null,"session_id":"sess-2"}
{"type":"user","message":{"role":"user","content":"a plain user echo"},"parent_tool_use_id":null,"session_id":"sess-2"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"thinking","thinking":"Got it."},{"type":"text","text":"Found it.\n"}]},"parent_tool_use_id":null,"session_id":"sess-2"}
{"type":"assistant","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"Done."}]},"parent_tool_use_id":null,"session_id":"sess-2"}
{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"sess-2"}`)
	res, rec, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "find it"})
	if err != nil {
		t.Fatal(err)
	}
	wantText := []string{"I'll delegate.", "\n\nFound it.\n", "\nDone."}
	if got := rec.text(); !slices.Equal(got, wantText) {
		t.Errorf("text deltas = %q, want %q", got, wantText)
	}
	if res.Thinking != "Got it." {
		t.Errorf("Thinking = %q", res.Thinking)
	}
	var names []string
	for _, c := range res.ToolCalls {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"Task", "Read"}) || !res.ToolCalls[1].IsError || res.ToolCalls[0].IsError {
		t.Errorf("ToolCalls = %+v", res.ToolCalls)
	}
	if res.Usage != nil {
		t.Errorf("Usage = %v, want nil (none reported)", res.Usage)
	}
}

// A stream with only the result line still yields the answer.
func TestClaudeResultOnly(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"result","subtype":"success","is_error":false,"result":"42","session_id":"s"}`)
	res, rec, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "42" || !slices.Equal(rec.text(), []string{"42"}) {
		t.Errorf("Text = %q, deltas %q", res.Text, rec.text())
	}
}

func TestClaudeResumeArgs(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"sess-9"}`)
	r := f.runner(KindClaude, func(o *Options) { o.Model = "sonnet"; o.ExtraArgs = []string{"--max-turns", "8"} })

	first, _, err := run(t, r, Request{Prompt: "hello", SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, r, Request{Prompt: "-v: and again", SystemPrompt: "Be brief.", ResumeID: first.ResumeID}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n    int
		want []string
	}{
		{1, []string{"-p", "hello", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
			"--append-system-prompt", "Be brief.", "--permission-mode", "default", "--model", "sonnet", "--max-turns", "8"}},
		// A prompt that starts with "-" gets a leading space so it is not an option.
		{2, []string{"-p", " -v: and again", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
			"--resume", "sess-9", "--append-system-prompt", "Be brief.", "--permission-mode", "default", "--model", "sonnet", "--max-turns", "8"}},
	}
	for _, tt := range tests {
		if got := f.argv(tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("invocation %d argv = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestClaudeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		transcript string
		wantCode   int
		wantMsg    string
		wantText   string
	}{
		{
			name: "is_error result and exit 1",
			transcript: `{"type":"system","subtype":"init","session_id":"s1"}
{"type":"assistant","message":{"id":"6d5e","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Invalid API key · Please run /login"}]},"parent_tool_use_id":null,"session_id":"s1"}
{"type":"result","subtype":"success","is_error":true,"duration_ms":10,"num_turns":1,"result":"Invalid API key · Please run /login","session_id":"s1","total_cost_usd":0}
@exit 1`,
			wantCode: 1,
			wantMsg:  "Invalid API key · Please run /login",
			// claude's synthetic error message is the error, not the answer.
			wantText: "",
		},
		{
			name:       "error subtype with errors and exit 0",
			transcript: `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s2","errors":["tool crashed",{"message":"and then some"}]}`,
			wantMsg:    "tool crashed; and then some",
		},
		{
			name:       "max turns without a message",
			transcript: `{"type":"result","subtype":"error_max_turns","session_id":"s3","num_turns":5}`,
			wantMsg:    "error_max_turns",
		},
		{
			name: "non-zero exit with stderr and no stream",
			transcript: `@stderr error: unknown option '--bogus'
@stderr (Did you mean --verbose?)
@exit 2`,
			wantCode: 2,
			wantMsg:  "error: unknown option '--bogus'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.transcript)
			res, _, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "hi"})
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v, want *ExitError", err)
			}
			if ee.Kind != KindClaude || ee.Code != tt.wantCode || ee.Message != tt.wantMsg {
				t.Errorf("ExitError = %+v, want code %d message %q", ee, tt.wantCode, tt.wantMsg)
			}
			if !strings.Contains(err.Error(), "claude-cli") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Error() = %q", err)
			}
			if ee.Stderr != res.Stderr {
				t.Errorf("ExitError.Stderr %q != Result.Stderr %q", ee.Stderr, res.Stderr)
			}
			if res.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", res.Text, tt.wantText)
			}
		})
	}
}

func TestClaudeStderrKeptOnSuccess(t *testing.T) {
	t.Parallel()
	f := newFake(t, `@stderr warning: config file has unknown key
{"type":"result","subtype":"success","is_error":false,"result":"fine","session_id":"s"}`)
	res, _, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stderr != "warning: config file has unknown key\n" {
		t.Errorf("Stderr = %q", res.Stderr)
	}
}

// A line over a megabyte (a big tool_result echo, a long answer) parses.
func TestClaudeHugeLine(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3<<20)
	f := newFake(t, `{"type":"system","subtype":"init","session_id":"s"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/big"}}]},"parent_tool_use_id":null,"session_id":"s"}
@sh cat "$FAKE_DIR/huge-result"
@sh cat "$FAKE_DIR/huge-answer"
{"type":"result","subtype":"success","is_error":false,"result":"ignored","session_id":"s"}`)
	f.writeRaw("huge-result", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`+big+`"}]},"parent_tool_use_id":null,"session_id":"s"}`+"\n")
	f.writeRaw("huge-answer", `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"`+big+`"}]},"parent_tool_use_id":null,"session_id":"s"}`+"\n")

	res, _, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "read it"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != big {
		t.Errorf("Text has %d bytes, want %d", len(res.Text), len(big))
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "Read" {
		t.Errorf("ToolCalls = %+v", res.ToolCalls)
	}
}

// A line over MaxLine is skipped, and the stream goes on.
func TestClaudeLineOverMaxLineSkipped(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"system","subtype":"init","session_id":"s"}
@sh cat "$FAKE_DIR/huge"
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"after"}]},"parent_tool_use_id":null,"session_id":"s"}
@sh printf '%s' '{"type":"result","subtype":"success","is_error":false,"result":"after","session_id":"s-final"}'`)
	f.writeRaw("huge", `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"`+strings.Repeat("y", 5000)+`"}]}}`+"\n")
	logs := &syncBuffer{}
	r := f.runner(KindClaude, func(o *Options) {
		o.MaxLine = 1024
		o.Logger = slogTo(logs)
	})
	res, _, err := run(t, r, Request{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "after" {
		t.Errorf("Text = %q", res.Text)
	}
	// The result line had no trailing newline; it still counts.
	if res.ResumeID != "s-final" {
		t.Errorf("ResumeID = %q", res.ResumeID)
	}
	if !strings.Contains(logs.String(), "oversized") {
		t.Errorf("no warning logged:\n%s", logs)
	}
}

// Lines that are not the CLI's JSON (banners, warnings, truncated JSON,
// arrays, unknown types, odd shapes) are ignored.
func TestClaudeGarbageLinesIgnored(t *testing.T) {
	t.Parallel()
	var interleaved []string
	garbage := []string{
		"Warning: running in a container",
		"{not json",
		"[1,2,3]",
		`"a string"`,
		`{"type":"future_event","payload":{"x":1}}`,
		`{"type":"assistant","message":"not an object"}`,
		`{"type":"user","message":{"content":42}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":7}}}`,
		"   ",
		"\x1b[31mcolored\x1b[0m",
	}
	for i, line := range strings.Split(claudeToolTurn, "\n") {
		interleaved = append(interleaved, garbage[i%len(garbage)], line)
	}
	f := newFake(t, strings.Join(interleaved, "\n"))
	res, rec, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "List files"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Let me look.\n\nTwo files: a.go and b.go." || res.ResumeID != "sess-1" || len(res.ToolCalls) != 1 {
		t.Errorf("Result = %+v", res)
	}
	wantSeq := []string{"thinking", "thinking", "text", "text", "start:Bash", "end:Bash", "text"}
	if got := rec.sequence(); !slices.Equal(got, wantSeq) {
		t.Errorf("events = %q, want %q", got, wantSeq)
	}
}

func finished(rec *recorder) []ToolCall {
	var out []ToolCall
	for _, ev := range rec.events {
		if ev.ToolFinished != nil {
			out = append(out, *ev.ToolFinished)
		}
	}
	return out
}

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
