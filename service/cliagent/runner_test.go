package cliagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind    Kind
		wantErr bool
		binary  string
	}{
		{KindClaude, false, "claude"},
		{KindCodex, false, "codex"},
		{KindPi, false, "pi"},
		{"", true, ""},
		{"openai", true, ""},
		{"Claude-CLI", true, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			r, err := New(Options{Kind: tt.kind})
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%q) err = %v, wantErr %v", tt.kind, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if r.opts.Binary != tt.binary || r.opts.GracePeriod != defaultGracePeriod || r.opts.MaxLine != defaultMaxLine || r.opts.Kind != tt.kind {
				t.Errorf("defaults = %+v", r.opts)
			}
		})
	}
}

func TestNotInstalled(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	tests := []struct {
		kind    Kind
		path    string
		binary  string
		install string
	}{
		{KindClaude, "", "", "npm i -g @anthropic-ai/claude-code"},
		{KindCodex, empty, "", "npm i -g @openai/codex"},
		{KindPi, empty, "", "npm i -g @earendil-works/pi-coding-agent"},
		{KindClaude, os.Getenv("PATH"), filepath.Join(empty, "claude"), "npm i -g @anthropic-ai/claude-code"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+tt.binary, func(t *testing.T) {
			r, err := New(Options{Kind: tt.kind, Binary: tt.binary, Env: []string{"PATH=" + tt.path}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Run(t.Context(), Request{Prompt: "hi"}, nil)
			if !errors.Is(err, ErrNotInstalled) {
				t.Fatalf("err = %v, want ErrNotInstalled", err)
			}
			if !strings.Contains(err.Error(), tt.install) || !strings.Contains(err.Error(), string(tt.kind)) {
				t.Errorf("error %q should name %s and say %q", err, tt.kind, tt.install)
			}
			if _, err := r.LookPath(); !errors.Is(err, ErrNotInstalled) {
				t.Errorf("LookPath err = %v", err)
			}
		})
	}
}

// A relative PATH entry is never searched: it would run a binary from
// whatever directory the service happens to be in.
func TestLookPathIgnoresRelativeEntries(t *testing.T) {
	f := newFake(t, "")
	t.Chdir(binDir)
	r, err := New(Options{Kind: KindClaude, Env: []string{"PATH=.:" + f.dir}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := r.LookPath(); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("LookPath = %q, %v; want ErrNotInstalled", p, err)
	}
}

func TestRunRejectsBadRequests(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"result","subtype":"success","result":"x"}`)
	r := f.runner(KindClaude, nil)
	if _, err := r.Run(t.Context(), Request{Prompt: "  \n"}, nil); err == nil {
		t.Error("empty prompt accepted")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Run(ctx, Request{Prompt: "hi"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err = %v", err)
	}
	if n := f.invocations(); n != 0 {
		t.Errorf("CLI started %d times", n)
	}
}

// A CLI that ignores SIGINT and SIGTERM is SIGKILLed after two grace
// periods — with the tool it was running — and Run returns promptly.
func TestCancelKillsStubbornCLI(t *testing.T) {
	t.Parallel()
	f := newFake(t, `@sh trap '' INT TERM
{"type":"system","subtype":"init","session_id":"s-stub"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}},"parent_tool_use_id":null}
@sh sleep 60 & echo $! > "$FAKE_DIR/child"; echo $$ > "$FAKE_DIR/self"; wait`)
	const grace = 300 * time.Millisecond
	logs := &syncBuffer{}
	r := f.runner(KindClaude, func(o *Options) { o.GracePeriod = grace; o.Logger = slogTo(logs) })

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled time.Time
	res, err := r.Run(ctx, Request{Prompt: "hi"}, func(ev Event) {
		if ev.TextDelta != "" && cancelled.IsZero() {
			// Give the script time to start its child before stopping it.
			time.AfterFunc(100*time.Millisecond, cancel)
			cancelled = time.Now().Add(100 * time.Millisecond)
		}
	})
	elapsed := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if elapsed < 2*grace || elapsed > 2*grace+2*time.Second {
		t.Errorf("Run returned %v after cancel, want just over %v", elapsed, 2*grace)
	}
	if res.Text != "partial" || res.ResumeID != "s-stub" {
		t.Errorf("partial Result = %+v", res)
	}
	log := logs.String()
	for _, sig := range []string{"SIGINT", "SIGTERM", "SIGKILL"} {
		if !strings.Contains(log, "signal="+sig) {
			t.Errorf("no %s logged:\n%s", sig, log)
		}
	}
	for _, who := range []string{"self", "child"} {
		pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, f.dir, who)))
		if err != nil {
			t.Fatal(err)
		}
		if !eventuallyDead(pid) {
			t.Errorf("%s (pid %d) survived", who, pid)
		}
	}
}

// A CLI that stops on SIGINT, as the real ones do, is not waited on.
func TestCancelInterruptsCLI(t *testing.T) {
	t.Parallel()
	f := newFake(t, `@sh trap 'echo "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,\"session_id\":\"s-int\"}"; exit 130' INT
{"type":"system","subtype":"init","session_id":"s-int"}
{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"working"}]},"parent_tool_use_id":null}
@sh sleep 60 >/dev/null 2>&1 & wait`)
	// The fake waits on a background sleep: a shell runs a trap only after
	// its foreground child ends, and a SIGINT landing between fork and exec
	// is taken by that child, so a foreground sleep would ignore it for 60 s.
	// A trapped signal interrupts wait at once, as a real CLI stops on SIGINT.
	const grace = 3 * time.Second
	r := f.runner(KindClaude, func(o *Options) { o.GracePeriod = grace })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled time.Time
	res, err := r.Run(ctx, Request{Prompt: "hi"}, func(ev Event) {
		if ev.TextDelta != "" {
			cancelled = time.Now()
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if elapsed := time.Since(cancelled); elapsed > grace/2 {
		t.Errorf("Run took %v after cancel; the CLI exits on SIGINT", elapsed)
	}
	if res.Text != "working" || res.ResumeID != "s-int" {
		t.Errorf("partial Result = %+v", res)
	}
}

func TestDeadlineExceeded(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"thread.started","thread_id":"th"}
@sh sleep 60`)
	r := f.runner(KindCodex, func(o *Options) { o.GracePeriod = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := r.Run(ctx, Request{Prompt: "hi"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if res.ResumeID != "th" {
		t.Errorf("ResumeID = %q", res.ResumeID)
	}
}

// A CLI that exits but leaves a process holding stdout open does not hang
// Run beyond the grace period.
func TestExitWithLeftoverChild(t *testing.T) {
	t.Parallel()
	f := newFake(t, `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}
@sh sleep 60 & echo $! > "$FAKE_DIR/child"
@exit 0`)
	r := f.runner(KindClaude, func(o *Options) { o.GracePeriod = 300 * time.Millisecond })
	start := time.Now()
	res, err := r.Run(t.Context(), Request{Prompt: "hi"}, nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v", d)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, f.dir, "child")))
	if pid > 0 {
		_ = syscallKill(pid)
	}
}

// eventuallyDead reports whether pid is gone or a zombie within a second.
func eventuallyDead(pid int) bool {
	if runtime.GOOS != "linux" {
		return true // /proc is how we look
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// The state follows the parenthesized command name.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// A relative Binary is found relative to our directory even though the CLI
// runs in WorkDir.
func TestRelativeBinaryWithWorkDir(t *testing.T) {
	f := newFake(t, `{"type":"result","subtype":"success","is_error":false,"result":"rel","session_id":"s"}`)
	t.Chdir(filepath.Dir(binDir))
	r := f.runner(KindClaude, func(o *Options) {
		o.Binary = filepath.Join(".", filepath.Base(binDir), "claude")
		o.WorkDir = t.TempDir()
	})
	res, _, err := run(t, r, Request{Prompt: "hi"})
	if err != nil || res.Text != "rel" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
