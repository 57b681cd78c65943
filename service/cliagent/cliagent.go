// Package cliagent runs the installed coding-agent CLIs — Claude Code
// (claude-cli), OpenAI Codex (codex-cli) and pi (pi-cli) — as chat providers.
//
// Each Run spawns the CLI once, in its non-interactive JSON streaming mode,
// for one turn: the prompt goes on the command line, stdin is /dev/null, and
// stdout is read line by line as JSON. Assistant text and thinking stream to
// the caller as deltas; the CLI's own tool use (reading files, running
// commands) is reported as tool-call metadata with durations, because the CLI
// executes those tools itself and Jarvis only observes them. Conversation
// continuity across turns comes from the CLI's session store: a turn's
// Result.ResumeID is passed back in the next Request.
//
// Output formats differ per CLI and change between releases, so parsing is
// lenient: lines that are not JSON objects, unknown event types and fields of
// an unexpected shape are ignored (logged at Debug), never fatal.
//
// Cancelling Run's context stops the CLI in stages, each GracePeriod apart:
// SIGINT (what the CLIs treat as the user's Ctrl-C: abort the turn, save the
// session), then SIGTERM, then SIGKILL. The CLI runs in its own process group
// and every signal goes to the whole group, so tool subprocesses it started
// stop with it. On platforms without process groups the CLI is killed.
//
// Concurrency: a Runner is immutable after New and safe for concurrent Runs;
// each Run owns its own process. The onEvent callback is called sequentially
// from a goroutine other than Run's caller, and never after Run returns.
//
// Example:
//
//	r, err := cliagent.New(cliagent.Options{Kind: cliagent.KindClaude, WorkDir: dir})
//	if err != nil { ... }
//	res, err := r.Run(ctx, cliagent.Request{Prompt: "List the TODOs"}, func(ev cliagent.Event) {
//		fmt.Print(ev.TextDelta)
//	})
//	// next turn: cliagent.Request{Prompt: "Fix the first one", ResumeID: res.ResumeID}
package cliagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"jarvis/service/cliopts"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"jarvis/internal/childenv"
	"jarvis/internal/procstop"
	"jarvis/tools"
)

const isWindows = runtime.GOOS == "windows"

// Kind names a CLI chat provider; the values are the chat.provider
// strings.
type Kind string

const (
	KindClaude Kind = "claude-cli"
	KindCodex  Kind = "codex-cli"
	KindPi     Kind = "pi-cli"
)

// kindInfo is what differs between the CLIs apart from their stream format.
type kindInfo struct {
	binary  string
	install string
	login   string // how to sign in, for an authentication error
}

var kinds = map[Kind]kindInfo{
	KindClaude: {binary: "claude", install: "npm i -g @anthropic-ai/claude-code", login: "sign in by running `claude` and typing /login, or set ANTHROPIC_API_KEY"},
	KindCodex:  {binary: "codex", install: "npm i -g @openai/codex", login: "sign in with `codex login`, or set OPENAI_API_KEY"},
	KindPi:     {binary: "pi", install: "npm i -g @earendil-works/pi-coding-agent", login: "sign in by running `pi` and typing /login, or set the model provider's API key"},
}

const (
	defaultGracePeriod = 3 * time.Second
	defaultMaxLine     = 32 << 20 // a claude tool_result echo can be megabytes
	stderrKeep         = 64 << 10
)

// ErrEmptyReply is returned (wrapped) when the CLI ended the turn cleanly
// without a reply: no text and no tool use.
var ErrEmptyReply = errors.New("the CLI ended the turn without a reply")

// ErrNotInstalled is returned (wrapped in an error naming the CLI and its
// install command) when the CLI's executable is not found.
var ErrNotInstalled = errors.New("CLI not installed")

// Options configure a Runner. Only Kind is required.
type Options struct {
	Kind Kind
	// Binary is the executable's name, looked up on PATH, or a path.
	// Default "claude", "codex" or "pi".
	Binary string
	// ExtraArgs are passed to the CLI after the flags cliagent sets and
	// before the prompt (e.g. "--max-turns", "8"); New checks them with
	// CheckArgs. For codex they come before a "resume" subcommand, where
	// codex exec accepts its options.
	ExtraArgs []string
	// Model is passed as --model when set.
	Model string
	// PermissionMode is what the CLI's own tools may do: PermReadOnly (the
	// default), PermEdit or PermFull.
	PermissionMode string
	// WorkDir is the CLI's working directory; empty means ours. The CLIs
	// store and find sessions per directory, so keep it stable across turns.
	WorkDir string
	// Env entries ("KEY=value") are added to this process's environment,
	// overriding same-named variables. A PATH here is also where Binary is
	// looked up.
	Env []string
	// GracePeriod is how long each stop stage waits for the CLI to exit
	// after ctx is cancelled: SIGINT, wait, SIGTERM, wait, SIGKILL. It also
	// bounds how long Run waits for output pipes held open by leftover
	// grandchildren once the CLI has exited. Default 3s.
	GracePeriod time.Duration
	// Logger receives operational logs; prompts and output are never logged
	// above Debug. Default: discard.
	Logger *slog.Logger
	// MaxLine caps one stdout line in bytes; a longer line is skipped with
	// a warning and parsing continues. Default 32 MiB.
	MaxLine int
	// Sandbox is Jarvis's sandbox (its helper, bubblewrap and protected
	// folders; Writable and Network are set per run) the CLI runs in when
	// its own does not apply (OwnSandbox): see sandbox.go. Nil: the CLI
	// runs unconfined, and Runner.Sandbox says so.
	Sandbox *tools.Sandbox
}

// Request is one turn.
type Request struct {
	Prompt string
	// SystemPrompt is added to the CLI's own system prompt: claude and pi
	// via --append-system-prompt on every turn; codex has no such flag, so
	// it is prepended to the prompt of a new thread only (a resumed thread
	// already holds it).
	SystemPrompt string
	// ResumeID continues the conversation of a previous turn: pass that
	// turn's Result.ResumeID. Empty starts a new conversation.
	ResumeID string
}

// ToolCall is one tool use by the CLI, observed from its stream.
type ToolCall struct {
	// ID is the CLI's id for the call, used to pair start and result.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// DurationMs is the time from the call appearing in the stream to its
	// result appearing; a call without a result runs until the stream ends.
	DurationMs int64           `json:"durationMs"`
	Input      json.RawMessage `json:"input,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
}

// Result is a turn's outcome. Run returns the partial Result along with an
// error, so text streamed before a failure or cancellation is not lost.
type Result struct {
	// Text is all assistant text of the turn, exactly the concatenation of
	// the TextDeltas sent: interim messages ("Let me look at the tests.")
	// and the final answer, separated by blank lines.
	Text string
	// Thinking is the concatenation of the ThinkingDeltas sent.
	Thinking string
	// ResumeID identifies the CLI's session (claude session_id, codex
	// thread_id, pi session id); pass it in the next Request to continue.
	ResumeID string
	// ToolCalls are in the order the calls started.
	ToolCalls []ToolCall
	// Usage is the CLI's own usage report, as it reports it (token counts;
	// claude adds total_cost_usd, num_turns, duration_ms; pi's per-message
	// reports are summed). Nil when the CLI reported none.
	Usage map[string]any
	// Stderr is the tail (up to 64 KiB) of the CLI's standard error.
	Stderr string
	// SessionReset reports that the CLI no longer knew Request.ResumeID
	// (deleted, made in another folder or on another machine), so this
	// turn started a new CLI conversation; a Status event said so.
	SessionReset bool

	// noise is the CLI's stdout lines that were not JSON (the last few).
	noise string
}

// Event is one streaming update; exactly one field is set.
type Event struct {
	TextDelta     string
	ThinkingDelta string
	// ToolStarted and ToolFinished are copies; the receiver may keep them.
	ToolStarted  *ToolCall
	ToolFinished *ToolCall
	// Status is a progress line for the user: an API retry, a new CLI
	// conversation started in place of one the CLI no longer knows.
	Status string
}

// ExitError reports that the CLI failed: its stream said so (a claude result
// with is_error, a codex turn.failed, a pi assistant message that stopped
// with an error) or it exited with a non-zero code.
type ExitError struct {
	Kind Kind
	// Code is the exit code: 0 when the stream reported a failure but the
	// process exited cleanly, -1 when it was killed by a signal.
	Code int
	// Stderr is the tail of the CLI's standard error.
	Stderr string
	// Message is the error message from the stream when there is one,
	// else the first meaningful line of stderr (FirstErrorLine).
	Message string
	// Auth reports an authentication failure (not logged in, a key
	// refused): retrying will not help; Message says what to run.
	Auth bool
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cliagent: %s failed", e.Kind)
	if e.Code != 0 {
		fmt.Fprintf(&b, " (exit code %d)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Runner runs one kind of CLI. Create it with New.
type Runner struct {
	opts Options
	info kindInfo
	log  *slog.Logger
}

// New validates opts and fills defaults. It does not look for the CLI, so a
// Runner can be configured before the CLI is installed; LookPath checks.
func New(opts Options) (*Runner, error) {
	info, ok := kinds[opts.Kind]
	if !ok {
		return nil, fmt.Errorf("cliagent: unknown kind %q (want %q, %q or %q)", opts.Kind, KindClaude, KindCodex, KindPi)
	}
	if opts.Binary == "" {
		opts.Binary = info.binary
	}
	if err := cliopts.CheckArgs(string(opts.Kind), opts.ExtraArgs); err != nil {
		return nil, fmt.Errorf("cliagent: %s args: %w", opts.Kind, err)
	}
	if err := cliopts.CheckPermissionMode(opts.PermissionMode); err != nil {
		return nil, fmt.Errorf("cliagent: %s: %w", opts.Kind, err)
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = defaultGracePeriod
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = defaultMaxLine
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.ExtraArgs = append([]string(nil), opts.ExtraArgs...)
	opts.Env = append([]string(nil), opts.Env...)
	return &Runner{opts: opts, info: info, log: opts.Logger.With("kind", string(opts.Kind))}, nil
}

// LookPath resolves the CLI's executable the way Run does. The error wraps
// ErrNotInstalled and says how to install the CLI.
func (r *Runner) LookPath() (string, error) {
	return r.lookPath(r.environ())
}

// environ is the CLI's environment: ours without Jarvis's secrets
// (childenv) plus Options.Env. exec.Cmd keeps the last of duplicate keys,
// so Options.Env overrides.
func (r *Runner) environ() []string {
	return append(childenv.Scrub(os.Environ(), childenv.JarvisSecrets), r.opts.Env...)
}

func (r *Runner) lookPath(env []string) (string, error) {
	bin := r.opts.Binary
	var found string
	var err error
	if strings.ContainsRune(bin, filepath.Separator) || strings.ContainsRune(bin, '/') {
		found, err = exec.LookPath(bin)
	} else {
		// Search the CLI's PATH rather than exec.LookPath's os.Getenv, so
		// Options.Env can point at a specific installation.
		err = exec.ErrNotFound
		for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue // a relative PATH entry would run whatever is in WorkDir
			}
			if p, e := exec.LookPath(filepath.Join(dir, bin)); e == nil {
				found, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("cliagent: %s: the %q executable was not found on PATH; install it with `%s`: %w",
			r.opts.Kind, bin, r.info.install, ErrNotInstalled)
	}
	// exec resolves a relative Path against WorkDir, not against where we
	// found it.
	if abs, err := filepath.Abs(found); err == nil {
		found = abs
	}
	return found, nil
}

// envValue returns the last value of key in env, as exec.Cmd would use it.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if ok && (k == key || (isWindows && strings.EqualFold(k, key))) {
			v = val
		}
	}
	return v
}

// Run runs one turn to completion, calling onEvent (which may be nil) for
// each delta and tool event. On failure the error is an *ExitError, wraps
// ErrNotInstalled, or — when ctx ended the turn — wraps ctx.Err(); the
// partial Result is returned with it.
func (r *Runner) Run(ctx context.Context, req Request, onEvent func(Event)) (Result, error) {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	res, err := r.runOnce(ctx, req, onEvent)
	if req.ResumeID != "" && ctx.Err() == nil && staleSession(res, err) {
		r.log.Info("cliagent: the CLI no longer knows the session; starting a new one", "err", err)
		onEvent(Event{Status: fmt.Sprintf("%s no longer knows this conversation (it was deleted, or made in another folder or on another machine): starting a new conversation", r.opts.Kind)})
		req.ResumeID = ""
		res, err = r.runOnce(ctx, req, onEvent)
		res.SessionReset = true
	}
	if err == nil && strings.TrimSpace(res.Text) == "" && len(res.ToolCalls) == 0 {
		msg := cliopts.FirstErrorLine(res.Stderr)
		if msg == "" {
			msg = cliopts.LastLine(res.noise)
		}
		if msg != "" {
			msg = " (" + msg + ")"
		}
		return res, fmt.Errorf("cliagent: %s: %w%s", r.opts.Kind, ErrEmptyReply, msg)
	}
	return res, err
}

// runOnce runs the CLI once.
func (r *Runner) runOnce(ctx context.Context, req Request, onEvent func(Event)) (Result, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return Result{}, fmt.Errorf("cliagent: %s: empty prompt", r.opts.Kind)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("cliagent: %s: %w", r.opts.Kind, err)
	}
	env := r.environ()
	path, err := r.lookPath(env)
	if err != nil {
		return Result{}, err
	}
	t := newTurn(onEvent, r.log)
	handle := r.parser(t)
	lines := &lineWriter{max: r.opts.MaxLine, onLine: handle, onSkip: func(n int) {
		r.log.Warn("cliagent: skipped an oversized output line", "bytes", n, "maxLine", r.opts.MaxLine)
	}}
	stderr := &tailBuffer{max: stderrKeep}

	args := r.args(req)
	cmd := &exec.Cmd{
		Path:   path,
		Args:   append([]string{r.opts.Binary}, args...),
		Dir:    r.opts.WorkDir,
		Env:    env,
		Stdout: lines,
		Stderr: stderr,
		// Stdin stays nil (/dev/null): codex appends piped stdin to the
		// prompt and would wait for its EOF.
		WaitDelay: r.opts.GracePeriod,
	}
	if r.confined() {
		sb, tmp, err := r.sandbox(r.opts.WorkDir, env)
		if err != nil {
			return Result{}, fmt.Errorf("cliagent: %s: preparing the sandbox: %w", r.opts.Kind, err)
		}
		defer os.RemoveAll(tmp)
		c := sb.Command(path, args, cmd.Dir)
		if c.Err != nil {
			return Result{}, fmt.Errorf("cliagent: %s: the sandbox: %w", r.opts.Kind, c.Err)
		}
		cmd.Path, cmd.Args = c.Path, c.Args
		cmd.Env = append(env, "TMPDIR="+tmp)
	}
	procstop.SetGroup(cmd)

	r.log.Debug("cliagent: starting", "path", path, "args", len(args), "resume", req.ResumeID != "")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("cliagent: %s: start %s: %w", r.opts.Kind, path, err)
	}

	exited := make(chan struct{})
	var stopping atomic.Bool
	var wg sync.WaitGroup
	tree := procstop.NewTree() // what the CLI started, seen while stopping it
	wg.Go(func() { r.stopOnCancel(ctx, t.abort, cmd, exited, &stopping, tree) })
	waitErr := cmd.Wait()
	close(exited)
	wg.Wait()
	lines.flush()

	res := t.finish()
	res.Stderr = stderr.String()
	res.noise = strings.Join(t.noise, "\n")
	if stopping.Load() {
		// Stragglers that ignored the signals or left the group's pipes
		// open: the turn is over, they go too.
		tree.Kill(cmd)
		r.log.Info("cliagent: stopped", "elapsed", time.Since(start).Round(time.Millisecond), "auth", t.authMsg != "")
		if t.authMsg != "" && ctx.Err() == nil {
			return res, &ExitError{Kind: r.opts.Kind, Code: -1, Stderr: res.Stderr, Message: t.authMsg + "; " + r.info.login, Auth: true}
		}
		return res, fmt.Errorf("cliagent: %s: %w", r.opts.Kind, context.Cause(ctx))
	}

	code := 0
	if waitErr != nil {
		var ee *exec.ExitError
		switch {
		case errors.As(waitErr, &ee):
			code = ee.ExitCode()
		case errors.Is(waitErr, exec.ErrWaitDelay):
			// The CLI exited but something it started kept stdout open;
			// everything the CLI wrote has been read.
			r.log.Warn("cliagent: output pipe held open after exit", "gracePeriod", r.opts.GracePeriod)
		default:
			return res, fmt.Errorf("cliagent: %s: %w", r.opts.Kind, waitErr)
		}
	}
	r.log.Debug("cliagent: finished", "code", code, "elapsed", time.Since(start).Round(time.Millisecond),
		"toolCalls", len(res.ToolCalls), "failed", t.failed)
	if code != 0 || t.failed {
		msg := t.failMsg
		if msg == "" {
			msg = t.errHint
		}
		if msg == "" {
			msg = cliopts.FirstErrorLine(res.Stderr)
		}
		auth := authPattern.MatchString(msg)
		return res, &ExitError{Kind: r.opts.Kind, Code: code, Stderr: res.Stderr, Message: msg, Auth: auth}
	}
	return res, nil
}

// stopOnCancel waits for ctx to end while the CLI runs, then walks it down:
// SIGINT, SIGTERM, SIGKILL, GracePeriod apart, stopping as soon as it exits.
// Each stage also reaches the processes the CLI started in a group or
// session of their own (tree collects them while the CLI lives): pi runs its
// bash tool detached, and a cancel must not leave it running.
// abort ends the turn the same way when the stream shows it cannot succeed.
func (r *Runner) stopOnCancel(ctx context.Context, abort <-chan struct{}, cmd *exec.Cmd, exited <-chan struct{}, stopping *atomic.Bool, tree *procstop.Tree) {
	select {
	case <-exited:
		return
	case <-ctx.Done():
	case <-abort:
	}
	stopping.Store(true)
	stages := procstop.Stages()
	for i, s := range stages {
		r.log.Info("cliagent: stopping CLI", "signal", s.Name, "pid", cmd.Process.Pid)
		err := tree.Signal(cmd, s)
		if errors.Is(err, errors.ErrUnsupported) {
			continue // no such stage on this platform: don't wait for nothing
		}
		if err != nil {
			r.log.Debug("cliagent: signal failed", "signal", s.Name, "err", err)
		}
		if i == len(stages)-1 {
			return
		}
		timer := time.NewTimer(r.opts.GracePeriod)
		select {
		case <-exited:
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// args builds the CLI's argument list (without argv[0]).
func (r *Runner) args(req Request) []string {
	var a []string
	own := permArgs(r.opts.Kind, r.opts.PermissionMode)
	if r.opts.Model != "" {
		own = append(own, "--model", r.opts.Model)
	}
	own = append(own, r.opts.ExtraArgs...)
	switch r.opts.Kind {
	case KindClaude:
		a = []string{"-p", safePrompt(req.Prompt, false), "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
		if req.ResumeID != "" {
			a = append(a, "--resume", req.ResumeID)
		}
		if req.SystemPrompt != "" {
			a = append(a, "--append-system-prompt", req.SystemPrompt)
		}
		a = append(a, own...)
	case KindCodex:
		prompt := req.Prompt
		if req.SystemPrompt != "" && req.ResumeID == "" {
			prompt = req.SystemPrompt + "\n\n" + prompt
		}
		// Without --skip-git-repo-check codex refuses every turn in a
		// folder that is not a git repository, as Jarvis's default
		// working folder is not.
		a = append([]string{"exec", "--json", "--skip-git-repo-check"}, own...)
		if req.ResumeID != "" {
			a = append(a, "resume", req.ResumeID)
		}
		a = append(a, safePrompt(prompt, false))
	case KindPi:
		a = []string{"--mode", "json"}
		if req.ResumeID != "" {
			a = append(a, "--session", req.ResumeID)
		}
		if req.SystemPrompt != "" {
			a = append(a, "--append-system-prompt", req.SystemPrompt)
		}
		a = append(a, own...)
		a = append(a, safePrompt(req.Prompt, true))
	}
	return a
}

// safePrompt keeps a prompt from being parsed as an option: a leading "-"
// would be a flag (and a lone "-" means "read stdin" to codex), and pi reads
// a leading "@" as a file to attach even after "--". A leading space is
// harmless to the model and works with every version of every CLI.
func safePrompt(p string, atIsSpecial bool) string {
	if strings.HasPrefix(p, "-") || (atIsSpecial && strings.HasPrefix(p, "@")) {
		return " " + p
	}
	return p
}

// parser returns the line handler for the Runner's kind.
func (r *Runner) parser(t *turn) func([]byte) {
	switch r.opts.Kind {
	case KindCodex:
		return (&codexParser{turn: t}).line
	case KindPi:
		return (&piParser{turn: t}).line
	default:
		return (&claudeParser{turn: t, streamed: map[string]bool{}}).line
	}
}
