package cliagent

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func statuses(rec *recorder) []string {
	var out []string
	for _, ev := range rec.events {
		if ev.Status != "" {
			out = append(out, ev.Status)
		}
	}
	return out
}

// A CLI session the CLI no longer knows (deleted, another project, another
// machine) starts a new CLI session, says so, and the turn is answered.
func TestStaleSessionStartsAnew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kind  Kind
		flag  string // the resume flag in argv
		stale string // what the CLI prints when resumed
		fresh string
	}{
		{"claude unknown id", KindClaude, "--resume", `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"old","total_cost_usd":0,"errors":["No conversation found with session ID: old"]}
@stderr No conversation found with session ID: old
@exit 1`, `{"type":"system","subtype":"init","session_id":"new"}
{"type":"result","subtype":"success","is_error":false,"result":"fresh answer","session_id":"new"}`},
		{"codex unknown thread", KindCodex, "resume", `@stderr Error: thread/resume: no rollout found for thread id old
@exit 1`, `{"type":"thread.started","thread_id":"new"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"fresh answer"}}
{"type":"turn.completed","usage":{}}`},
		// pi prints this on stdout, asks whether to fork, reads EOF from
		// stdin, prints "Aborted." and exits 0 with no reply at all.
		{"pi other project", KindPi, "--session", "\x1b[33mSession found in different project: /home/u/other\x1b[0m\nFork this session into current directory? [y/N] \x1b[2mAborted.\x1b[0m\n@exit 0",
			`{"type":"session","version":3,"id":"new","cwd":"/w"}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"fresh answer"}],"stopReason":"stop"}}`},
		{"pi unknown id", KindPi, "--session", `@stderr No session found matching 'old'
@exit 1`, `{"type":"session","version":3,"id":"new","cwd":"/w"}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"fresh answer"}],"stopReason":"stop"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, `@sh case " $* " in *" `+tt.flag+` old "*) ;; *) exec /bin/sh "$FAKE_DIR/fresh.sh";; esac
`+tt.stale)
			fresh := newFake(t, tt.fresh)
			f.writeRaw("fresh.sh", readFile(t, fresh.dir, "script.sh"))
			res, rec, err := run(t, f.runner(tt.kind, nil), Request{Prompt: "hi", ResumeID: "old"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Text != "fresh answer" || res.ResumeID != "new" || !res.SessionReset {
				t.Errorf("Result = %+v", res)
			}
			if st := statuses(rec); len(st) != 1 || !strings.Contains(st[0], "new conversation") {
				t.Errorf("status events %q, want one saying a new conversation started", st)
			}
			if n := f.invocations(); n != 2 || slices.Contains(f.argv(2), "old") {
				t.Errorf("%d invocations, second argv %q", n, f.argv(n))
			}
		})
	}
}

// A turn that ends cleanly with no reply at all is an error, never an
// empty answer.
func TestEmptyReplyIsAnError(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"session","version":3,"id":"p","cwd":"/w"}
{"type":"agent_start"}
{"type":"agent_end","messages":[]}`)
	res, _, err := run(t, f.runner(KindPi, nil), Request{Prompt: "hi"})
	if !errors.Is(err, ErrEmptyReply) || res.ResumeID != "p" {
		t.Fatalf("Run = %+v, %v; want ErrEmptyReply", res, err)
	}
}

// claude's api_retry lines become status lines; an authentication error
// ends the turn at once instead of after minutes of retries.
func TestClaudeAPIRetry(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"system","subtype":"init","session_id":"s"}
{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":600,"error_status":529,"error":"overloaded","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}`)
	res, rec, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "hi"})
	if err != nil || res.Text != "ok" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if st := statuses(rec); len(st) != 1 || !strings.Contains(st[0], "529") || !strings.Contains(st[0], "1 of 10") {
		t.Errorf("status events %q", st)
	}

	auth := newFake(t, `{"type":"system","subtype":"init","session_id":"s"}
{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":508,"error_status":401,"error":"authentication_failed","session_id":"s"}
@sh sleep 60 >/dev/null 2>&1 & wait`)
	res, _, err = run(t, auth.runner(KindClaude, nil), Request{Prompt: "hi"})
	var ee *ExitError
	if !errors.As(err, &ee) || !ee.Auth || !strings.Contains(ee.Message, "401") || !strings.Contains(ee.Message, "/login") {
		t.Fatalf("err = %v, want an authentication ExitError naming 401 and /login", err)
	}
	if res.Text != "" || res.ResumeID != "s" {
		t.Errorf("Result = %+v", res)
	}
}

// claude reports a refused key as a synthetic assistant message and an
// error result: that text is the error, not the answer.
func TestClaudeSyntheticErrorIsNotTheAnswer(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"system","subtype":"init","session_id":"s"}
{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Invalid API key · Please run /login"}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","session_id":"s"}
@exit 1`)
	res, rec, err := run(t, f.runner(KindClaude, nil), Request{Prompt: "hi"})
	var ee *ExitError
	if !errors.As(err, &ee) || !ee.Auth || ee.Message != "Invalid API key · Please run /login" {
		t.Fatalf("err = %#v", err)
	}
	if res.Text != "" || len(rec.text()) != 0 {
		t.Errorf("the error text became the answer: %q", res.Text)
	}
}

// codex with RUST_BACKTRACE=1 ends its stderr with a backtrace: the error
// is the first meaningful line, not the last.
func TestCodexFirstMeaningfulStderrLine(t *testing.T) {
	t.Parallel()
	f := newFake(t, `@stderr 2026-11-25T10:00:00.000000Z  WARN codex_core::config: ignoring unknown key
@stderr Error: Failed to create session: Permission denied (os error 13)
@stderr 
@stderr Stack backtrace:
@stderr    0: anyhow::error::<impl anyhow::Error>::msg
@stderr              at /rustc/1.90.0/library/std/src/backtrace.rs:331:13
@stderr    1: codex_exec::run_main::{{closure}}
@exit 1`)
	_, _, err := run(t, f.runner(KindCodex, nil), Request{Prompt: "hi"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Message != "Error: Failed to create session: Permission denied (os error 13)" {
		t.Fatalf("err = %v", err)
	}
}
