// Package acpagent runs an Agent Client Protocol (ACP v1) agent — Claude
// Code through claude-code-acp, codex-acp, gemini --experimental-acp,
// goose acp, pi-acp — as a Jarvis chat agent, with Jarvis as the ACP
// client (github.com/coder/acp-go-sdk).
//
// One agent process serves one Jarvis session and is kept between turns:
// the first turn starts it (initialize, then session/new), later turns
// reuse its ACP session. A process that crashed, was stopped by a cancel,
// or sent something malformed is replaced on the next turn; the ACP
// session is then resumed with session/load where the agent supports it,
// else a new one starts and the Result says so.
//
// What the agent asks of its client goes to a Host the caller implements:
// permission requests (session/request_permission) and file reads and
// writes (fs/read_text_file, fs/write_text_file), and commands (terminal/*,
// terminal.go). The service's Host sends each to the desktop's gate as a
// tool request, so every file the agent touches and every command it runs
// through its client has a gate decision and an audit row. Paths outside
// the agent's working folder are refused here, before any Host sees them:
// the working folder is the agent's confinement root.
//
// Concurrency: an Agent runs one turn at a time (Prompt serializes); Close
// may be called from any goroutine.
package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"jarvis/internal/childenv"
	"jarvis/internal/procstop"
	"jarvis/service/cliopts"
)

const (
	defaultGrace       = 3 * time.Second
	defaultInitTimeout = 30 * time.Second
	defaultMaxLine     = 8 << 20
	stderrKeep         = 32 << 10
)

// Options configure an Agent. Command is required.
type Options struct {
	// Command and Args start the agent, e.g. "npx", ["-y", "@zed-industries/codex-acp"].
	Command string
	Args    []string
	// Env entries ("KEY=value", secrets already resolved) are added to
	// Jarvis's environment less its own secrets (childenv).
	Env []string
	// WorkDir is the agent's working folder and confinement root: the
	// session's cwd, and the only place its file requests may reach.
	// Required, absolute.
	WorkDir string
	// GracePeriod is how long a cancel waits for the agent to end its turn
	// after session/cancel, and each stop stage after that. Default 3s.
	GracePeriod time.Duration
	// InitTimeout bounds the start: initialize and the session's creation.
	// Default 30s (npx may have to fetch the adapter first).
	InitTimeout time.Duration
	// MaxLine caps one JSON-RPC message from the agent. Default 8 MiB.
	MaxLine int
	Logger  *slog.Logger
	// Resume is the ACP session an earlier Agent of this conversation had
	// (kept with its replies, read back after a restart): the first turn
	// resumes it with session/load when the agent offers it and the
	// instructions key is the same; else a new session starts.
	Resume Resume
	// MCP are MCP servers given to each ACP session (Jarvis's own
	// endpoint, through which the agent reaches the desktop's MCP tools
	// under its gate): sent as HTTP servers when the agent's
	// mcpCapabilities.http is true; else as their Bridge (a stdio server)
	// when they have one; otherwise not sent, and the first turn's Notice
	// says so.
	MCP []MCPServer
}

// MCPServer is an MCP server reached over Streamable HTTP.
type MCPServer struct {
	Name    string
	URL     string
	Headers map[string]string
	// Bridge, when set, is the stdio server given instead to an agent that
	// takes MCP servers only over stdio: a program that forwards to URL.
	Bridge *StdioServer
}

// StdioServer is an MCP server the agent starts itself and talks to over
// its standard streams.
type StdioServer struct {
	Command string
	Args    []string
	Env     map[string]string
}

// Resume names an earlier ACP session and the instructions key it started with.
type Resume struct {
	SessionID       string
	InstructionsKey string
}

// Host serves what the agent asks of its client. Its methods are called
// during Prompt, from goroutines other than Prompt's caller, with a context
// that ends with the turn.
type Host interface {
	// RequestPermission asks whether the agent may run a tool call; false
	// (or an error: a timeout, Stop, a closed window) rejects it.
	RequestPermission(ctx context.Context, p Permission) (bool, error)
	// ReadTextFile returns a file's text; line (1-based) and limit, when
	// not zero, select lines.
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	// WriteTextFile writes a file's text.
	WriteTextFile(ctx context.Context, path, content string) error
	// RunCommand runs a command to its end (terminal/create); an error
	// (denied, not allowed, timed out) fails the terminal's creation.
	RunCommand(ctx context.Context, c Command) (CommandOutput, error)
}

// Permission is one session/request_permission: the tool call the agent
// wants to run.
type Permission struct {
	ToolCallID string
	Title      string
	Kind       string // read, edit, delete, move, search, execute, think, fetch, other
	// RawInput is the tool's input as the agent reported it (JSON), when it did.
	RawInput any
	// Locations are the files the call touches.
	Locations []string
}

// Event is one streaming update; exactly one field is set.
type Event struct {
	TextDelta    string
	ThoughtDelta string
	// Status is a progress line: a tool call starting or finishing.
	Status string
	// Plan is the agent's current plan (the whole plan, each time).
	Plan []PlanEntry
	// Notice is a line about the turn itself for the user (images the
	// agent does not take, a permission the user denied).
	Notice string
	// AgentTool is a command the agent ran itself, inside its own program
	// (not through Jarvis's terminals): reported once it ended, for the
	// record; no gate decided it.
	AgentTool *AgentTool
	// Commands is the agent's whole list of slash commands when it changed
	// (available_commands_update; never nil then, maybe empty).
	Commands []SlashCommand
	// Choices are the session's modes and models and the current ones:
	// sent when a session opens, when a choice is applied, and when the
	// agent changes its mode itself (current_mode_update).
	Choices *Choices
	// Diff is a file change a tool call of the agent's reported (its
	// content of type diff), once the call completed.
	Diff *Diff
}

// Diff is one file change the agent reported.
type Diff struct {
	ToolCallID string
	Title      string
	Path       string
	// Old is the text before (nil: a new file); New the text after.
	Old *string
	New string
	// Checkpointed is true when Jarvis wrote the file for the agent this
	// turn (fs/write_text_file, through the gate): the desktop saved it
	// before, so the turn's undo restores it. False: the agent wrote it
	// itself and Jarvis holds no copy of the file as it was.
	Checkpointed bool
}

// SlashCommand is one of the agent's slash commands: the user runs it by
// sending "/Name input" as the prompt's text.
type SlashCommand struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Hint describes the input typed after the name; "" when it takes none.
	Hint string `json:"hint,omitempty"`
}

// AgentTool is one tool call of kind "execute" the agent ran on its own.
type AgentTool struct {
	ID    string
	Title string
	Kind  string
	// Input is the tool's input as the agent reported it (JSON), or nil.
	Input json.RawMessage
	// OK is false when the agent reported the call failed.
	OK bool
}

// PlanEntry is one step of an agent's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"` // pending, in_progress, completed
	Priority string `json:"priority,omitempty"`
}

// Result is a turn's outcome; Prompt returns the partial Result with an error.
type Result struct {
	Text       string
	StopReason string
	// SessionID is the ACP session's id.
	SessionID string
	// SessionLost reports that the agent process was replaced and could
	// not resume the earlier ACP session (no session/load, or it failed):
	// this turn started a new conversation on the agent's side.
	SessionLost bool
	// InstructionsChanged reports that the instructions changed since the
	// ACP session started: this turn started a new one.
	InstructionsChanged bool
	// Summarized is how many earlier messages the new session's first
	// prompt recapped (0: none).
	Summarized int
	// Denied are the titles of the permission requests the user denied
	// during the turn.
	Denied []string
	// ImagesDropped is how many attached images were not sent because the
	// agent does not take images.
	ImagesDropped int
}

// AuthRequiredError reports that the agent refuses to start a session until
// the user signs in; Error says which method and what to run.
type AuthRequiredError struct {
	Methods []string // the methods' descriptions, as the user should read them
	Detail  string   // the agent's own message
	// Offered are the methods themselves (initialize's authMethods).
	Offered []AuthMethod
}

// AuthMethod is one way the agent offers to sign in.
type AuthMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Kind        string   `json:"kind"`           // env_var (keys in its environment), terminal (a login run in a terminal), agent (the agent's own)
	Vars        []string `json:"vars,omitempty"` // env_var: the variables it reads
	// Command, Args and Env are what a terminal method runs for the user
	// in a terminal they see: the program the method's _meta
	// "terminal-auth" names (claude-code-acp's login), or the agent's own
	// command with the method's arguments (ACP's terminal auth method).
	// Label is the terminal's title.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Label   string            `json:"label,omitempty"`
}

func (e *AuthRequiredError) Error() string {
	msg := "the agent needs you to sign in before it can start"
	if len(e.Methods) > 0 {
		msg += ": " + strings.Join(e.Methods, "; or ")
	}
	return msg
}

// ErrProtocol wraps a violation of the protocol by the agent: a malformed
// or oversized message, an unknown method. The process is replaced next turn.
var ErrProtocol = errors.New("the agent broke the protocol")

// ErrExited wraps the agent process ending before the turn did.
var ErrExited = errors.New("the agent process exited")

// Agent is one ACP agent serving one Jarvis session. Create it with New.
type Agent struct {
	opts Options
	log  *slog.Logger

	turnMu sync.Mutex // one Prompt at a time

	mu        sync.Mutex
	p         *process
	sessionID string // the ACP session, kept across process restarts
	instrKey  string // the instructions the ACP session started with (Input.key)
	closed    bool
	// choices are the open session's modes and models (choices.go);
	// choicesSent whether a turn has reported them since they changed;
	// want the user's choice, sent to each session.
	choices     Choices
	choicesSent bool
	want        struct{ Mode, Model string }
}

// New validates opts. It starts nothing: the first Prompt does.
func New(opts Options) (*Agent, error) {
	if strings.TrimSpace(opts.Command) == "" {
		return nil, errors.New("acpagent: command is required")
	}
	if !filepath.IsAbs(opts.WorkDir) {
		return nil, fmt.Errorf("acpagent: the working folder must be an absolute path, got %q", opts.WorkDir)
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = defaultGrace
	}
	if opts.InitTimeout <= 0 {
		opts.InitTimeout = defaultInitTimeout
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = defaultMaxLine
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.WorkDir = filepath.Clean(opts.WorkDir)
	return &Agent{opts: opts, log: opts.Logger.With("acp", opts.Command), sessionID: opts.Resume.SessionID, instrKey: opts.Resume.InstructionsKey}, nil
}

// process is one running agent.
type process struct {
	cmd         *exec.Cmd
	conn        *acp.ClientSideConnection
	client      *client
	guard       *guard
	tree        *procstop.Tree
	exited      chan struct{} // closed when the process has exited
	waitErr     error
	stderr      *tailBuffer
	loadSession bool
	images      bool // promptCapabilities.image: the agent takes image blocks
	mcpHTTP     bool // mcpCapabilities.http: the agent takes MCP servers over HTTP
	authMethods []acp.AuthMethod
	sessionID   string // the ACP session open on this process
}

// Prompt runs one turn. onEvent (may be nil) gets the stream; host serves
// the agent's requests. The first prompt of a new ACP session carries the
// instructions and, when there was a conversation before, its summary
// (preamble.go). Images go along when the agent takes them; otherwise a
// Notice says so before the prompt is sent. When the user denies a
// permission and the agent ends its turn over it (codex-acp's "reject"
// aborts the turn), the agent is told the user denied it and goes on, once
// per turn. When ctx ends the turn is cancelled (session/cancel) and, after
// the grace period, the agent's whole process group is ended; the next turn
// starts it again.
func (a *Agent) Prompt(ctx context.Context, in Input, host Host, onEvent func(Event)) (Result, error) {
	a.turnMu.Lock()
	defer a.turnMu.Unlock()
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	if strings.TrimSpace(in.Text) == "" {
		return Result{}, errors.New("acpagent: empty prompt")
	}
	images, err := imageBlocks(in.Images)
	if err != nil {
		return Result{}, err
	}
	a.mu.Lock()
	if in.Mode != "" {
		a.want.Mode = in.Mode
	}
	if in.Model != "" {
		a.want.Model = in.Model
	}
	a.mu.Unlock()
	p, o, err := a.ready(ctx, in.key())
	if err != nil {
		return Result{}, err
	}
	res := Result{SessionID: p.sessionID, SessionLost: o.lost, InstructionsChanged: o.changed}
	notes, err := a.apply(ctx, p)
	for _, n := range notes {
		onEvent(Event{Notice: n})
	}
	if err != nil {
		onEvent(Event{Notice: err.Error()})
	}
	if c, ok := a.unsent(); ok {
		onEvent(Event{Choices: &c})
	}
	if o.fresh && len(a.opts.MCP) > 0 && len(a.mcpServers(p)) == 0 {
		onEvent(Event{Notice: "the agent does not take MCP servers over HTTP: Jarvis's MCP tools were not given to it"})
	}
	var blocks []acp.ContentBlock
	if o.fresh && strings.TrimSpace(in.Instructions) != "" {
		blocks = append(blocks, instructionsBlock(in.Instructions))
	}
	if o.fresh && in.History != nil {
		if b, n := summaryBlock(in.History()); n > 0 {
			blocks, res.Summarized = append(blocks, b), n
		}
	}
	if len(images) > 0 && !p.images {
		res.ImagesDropped = len(images)
		onEvent(Event{Notice: fmt.Sprintf("the agent does not take images: the %d attached image(s) were not sent, only the text", len(images))})
		images = nil
	}
	if strings.HasPrefix(strings.TrimSpace(in.Text), "/") {
		// A slash command: agents recognize one only at the prompt's
		// start, so it goes before the instructions and the summary.
		blocks = append([]acp.ContentBlock{acp.TextBlock(in.Text)}, append(blocks, images...)...)
	} else {
		blocks = append(append(blocks, images...), acp.TextBlock(in.Text))
	}
	var buf strings.Builder
	turnCtx, endTurn := context.WithCancel(context.WithoutCancel(ctx))
	defer endTurn()
	p.client.begin(turnCtx, host, func(ev Event) {
		buf.WriteString(ev.TextDelta)
		onEvent(ev)
	})
	defer p.client.end()
	finish := func() Result {
		p.client.end() // no event after this: buf is ours
		res.Text = buf.String()
		res.Denied = p.client.deniedTitles()
		return res
	}

	for goOn := true; ; goOn = false {
		resp, err, stop := a.await(ctx, turnCtx, p, blocks)
		if stop != nil {
			return finish(), stop
		}
		if err != nil {
			return finish(), a.failure(p, "the turn failed", err)
		}
		res.StopReason = string(resp.StopReason)
		switch resp.StopReason {
		case acp.StopReasonRefusal:
			return finish(), errors.New("acpagent: the agent refused to continue")
		case acp.StopReasonCancelled:
			denied := p.client.deniedTitles()
			if len(denied) == 0 {
				return finish(), fmt.Errorf("acpagent: the agent cancelled the turn: %w", context.Canceled)
			}
			if !goOn {
				return finish(), nil
			}
			// The agent gave up its turn over the denial: tell it so, and
			// let it go on without what was denied.
			onEvent(Event{Notice: "you denied " + strings.Join(denied, "; ") + ": the agent was told, and goes on without it"})
			blocks = []acp.ContentBlock{acp.TextBlock(deniedPrompt(denied))}
			continue
		}
		return finish(), nil
	}
}

// deniedPrompt tells the agent that the user denied what it asked.
func deniedPrompt(titles []string) string {
	return "The user denied permission for: " + strings.Join(titles, "; ") +
		". Do not try it again. Go on without it: do what you can another way, or say what you would need."
}

// await sends one session/prompt and waits for its answer. stop is set when
// the turn must end without an answer: the process died or broke the
// protocol, or ctx ended (the turn was cancelled and the agent stopped).
func (a *Agent) await(ctx, turnCtx context.Context, p *process, blocks []acp.ContentBlock) (acp.PromptResponse, error, error) {
	type answer struct {
		resp acp.PromptResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := p.conn.Prompt(turnCtx, acp.PromptRequest{SessionId: acp.SessionId(p.sessionID), Prompt: blocks})
		done <- answer{resp, err}
	}()
	select {
	case ans := <-done:
		return ans.resp, ans.err, nil
	case <-p.exited:
		a.drain(p) // what it said before it died is part of the turn
		return acp.PromptResponse{}, nil, a.failure(p, "", nil)
	case <-p.guard.broken:
		return acp.PromptResponse{}, nil, a.failure(p, "", nil)
	case <-ctx.Done():
		a.log.Info("acpagent: cancelling the turn")
		_ = p.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: acp.SessionId(p.sessionID)})
		p.client.cancelPending() // pending permission requests are answered "cancelled"
		timer := time.NewTimer(a.opts.GracePeriod)
		select {
		case <-done:
		case <-p.exited:
		case <-timer.C:
		}
		timer.Stop()
		// Whatever the agent started must not outlive the turn: end the
		// whole process group; the next turn resumes with session/load.
		a.stop(p)
		return acp.PromptResponse{}, nil, fmt.Errorf("acpagent: %w", context.Cause(ctx))
	}
}

// exitedSoon reports whether p has exited, waiting up to the grace period
// when it has hung up (its exit follows its output's end).
func (a *Agent) exitedSoon(p *process) bool {
	select {
	case <-p.exited:
		return true
	case <-p.conn.Done():
	default:
		return false
	}
	timer := time.NewTimer(a.opts.GracePeriod)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// drain waits (at most the grace period) until the updates the agent sent
// before its output closed have been handled: the SDK hands notifications
// over asynchronously.
func (a *Agent) drain(p *process) {
	deadline := time.Now().Add(a.opts.GracePeriod)
	for time.Now().Before(deadline) {
		select {
		case <-p.conn.Done():
			if p.client.updates.Load() >= p.guard.updates.Load() {
				return
			}
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// failure stops p (it is not trusted for another turn) and explains why the
// turn failed: the protocol broken, the process gone, or the agent's error.
func (a *Agent) failure(p *process, what string, err error) error {
	if gerr := p.guard.error(); gerr != nil {
		a.stop(p)
		return fmt.Errorf("acpagent: %w: %v", ErrProtocol, gerr)
	}
	select {
	case <-p.exited:
		a.stop(p)
		msg := exitText(p.waitErr)
		if line := cliopts.FirstErrorLine(p.stderr.String()); line != "" {
			msg += ": " + line
		}
		return fmt.Errorf("acpagent: %w mid-turn (%s); the next turn starts it again", ErrExited, msg)
	default:
	}
	var re *acp.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return a.authError(p, re)
	}
	select {
	case <-p.conn.Done():
		// The agent hung up: it is exiting; say how it ended.
		timer := time.NewTimer(a.opts.GracePeriod)
		defer timer.Stop()
		select {
		case <-p.exited:
			return a.failure(p, what, nil)
		case <-timer.C:
		}
		a.stop(p)
		return fmt.Errorf("acpagent: %w: it closed its output mid-turn; the next turn starts it again", ErrExited)
	default:
	}
	return fmt.Errorf("acpagent: %s: %s", what, describe(err, p.stderr.String()))
}

// live returns the running process (nil when there is none, or it has
// exited: then it is stopped) and the instructions key of its session.
func (a *Agent) live() (*process, string, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, "", errors.New("acpagent: closed")
	}
	p, key := a.p, a.instrKey
	a.mu.Unlock()
	if p != nil {
		select {
		case <-p.exited:
			a.stop(p)
			p = nil
		default:
		}
	}
	return p, key, nil
}

// opened says how ready found the ACP session: fresh (session/new in this
// call), and why a fresh one replaced the earlier: lost (it could not be
// resumed) or changed (the instructions changed).
type opened struct{ fresh, lost, changed bool }

// ready returns a running, initialized process with an open ACP session
// started with the instructions key, starting one if needed.
func (a *Agent) ready(ctx context.Context, key string) (*process, opened, error) {
	p, prevKey, err := a.live()
	if err != nil {
		return nil, opened{}, err
	}
	startCtx, cancel := context.WithTimeout(ctx, a.opts.InitTimeout)
	defer cancel()
	if p != nil && p.sessionID != "" {
		if prevKey == key {
			return p, opened{}, nil
		}
		// A session keeps the instructions it started with: start anew.
		p.sessionID = ""
		return a.newSession(startCtx, p, key, opened{fresh: true, changed: true})
	}
	if p == nil { // else a process started to sign in (SignIn), with no session yet
		var err error
		if p, err = a.start(startCtx); err != nil {
			return nil, opened{}, err
		}
	}
	a.mu.Lock()
	prev := a.sessionID
	a.mu.Unlock()
	if prev != "" && p.loadSession && prevKey == key {
		// The agent replays the conversation as session/update
		// notifications: they are history, not this turn's output.
		p.client.replaying(true)
		resp, err := p.conn.LoadSession(startCtx, acp.LoadSessionRequest{SessionId: acp.SessionId(prev), Cwd: a.opts.WorkDir, McpServers: a.mcpServers(p)})
		p.client.replaying(false)
		if err == nil {
			p.sessionID = prev
			a.openedChoices(choicesOf(resp.Modes, resp.Models))
		} else {
			a.log.Info("acpagent: session/load failed; starting a new session", "err", err)
		}
	}
	if p.sessionID != "" {
		return p, opened{}, nil
	}
	return a.newSession(startCtx, p, key, opened{fresh: true, lost: prev != "" && prevKey == key, changed: prev != "" && prevKey != key})
}

// newSession opens a new ACP session on p, started with the instructions key.
func (a *Agent) newSession(ctx context.Context, p *process, key string, o opened) (*process, opened, error) {
	req := acp.NewSessionRequest{Cwd: a.opts.WorkDir, McpServers: a.mcpServers(p)}
	resp, err := p.conn.NewSession(ctx, req)
	if id := a.keyMethod(p); id != "" && authRequired(err) {
		// The key the method asks for is in the agent's environment (a
		// keyring secret in chat.env): sign in with it, then try again.
		if _, aerr := p.conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: id}); aerr == nil {
			resp, err = p.conn.NewSession(ctx, req)
		} else {
			a.log.Info("acpagent: authenticate failed", "method", id, "err", aerr)
		}
	}
	if err != nil {
		return nil, opened{}, a.startFailure(ctx, p, "session/new", err)
	}
	p.sessionID = string(resp.SessionId)
	a.mu.Lock()
	a.sessionID, a.instrKey = p.sessionID, key
	a.mu.Unlock()
	a.openedChoices(choicesOf(resp.Modes, resp.Models))
	return p, o, nil
}

// mcpServers are the MCP servers given to a session of p: Options.MCP
// over HTTP when the agent takes HTTP servers, else their stdio bridges
// (every agent takes stdio servers), else none.
func (a *Agent) mcpServers(p *process) []acp.McpServer {
	out := []acp.McpServer{}
	for _, m := range a.opts.MCP {
		switch {
		case p.mcpHTTP:
			hs := []acp.HttpHeader{}
			for k, v := range m.Headers {
				hs = append(hs, acp.HttpHeader{Name: k, Value: v})
			}
			out = append(out, acp.McpServer{Http: &acp.McpServerHttpInline{Name: m.Name, Type: "http", Url: m.URL, Headers: hs}})
		case m.Bridge != nil:
			env := []acp.EnvVariable{}
			for k, v := range m.Bridge.Env {
				env = append(env, acp.EnvVariable{Name: k, Value: v})
			}
			sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
			out = append(out, acp.McpServer{Stdio: &acp.McpServerStdio{Name: m.Name, Command: m.Bridge.Command, Args: append([]string{}, m.Bridge.Args...), Env: env}})
		}
	}
	return out
}

// authRequired reports the agent's "authentication required" error.
func authRequired(err error) bool {
	var re *acp.RequestError
	return errors.As(err, &re) && re.Code == -32000
}

// keyMethod is the agent's first API-key sign-in method (an env-var auth
// method) whose variables are all set in the agent's environment, or "".
func (a *Agent) keyMethod(p *process) string {
	set := map[string]bool{}
	for _, kv := range p.cmd.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
			set[k] = true
		} else if ok {
			delete(set, k) // a later empty value wins, as in the process
		}
	}
	for _, m := range p.authMethods {
		if m.EnvVar == nil || len(m.EnvVar.Vars) == 0 {
			continue
		}
		all := true
		for _, v := range m.EnvVar.Vars {
			all = all && set[v.Name]
		}
		if all {
			return m.EnvVar.Id
		}
	}
	return ""
}

// start launches the agent and initializes the connection.
func (a *Agent) start(ctx context.Context) (*process, error) {
	cmd := exec.Command(a.opts.Command, a.opts.Args...)
	cmd.Dir = a.opts.WorkDir
	cmd.Env = append(childenv.Scrub(os.Environ(), childenv.JarvisSecrets), a.opts.Env...)
	procstop.SetGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, tree: procstop.NewTree(), exited: make(chan struct{}), stderr: &tailBuffer{max: stderrKeep}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("acpagent: the agent's command %q was not found on PATH: install it, or give its full path in chat.command", a.opts.Command)
		}
		return nil, fmt.Errorf("acpagent: start %s: %w", a.opts.Command, err)
	}
	a.log.Info("acpagent: started", "pid", cmd.Process.Pid)
	p.guard = newGuard(stdout, a.opts.MaxLine)
	p.client = &client{root: a.opts.WorkDir, log: a.log, modeChanged: a.modeChanged}
	p.conn = acp.NewClientSideConnection(p.client, stdin, p.guard.out)
	p.conn.SetLogger(a.log)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	a.mu.Lock()
	a.p = p
	a.mu.Unlock()

	type initResult struct {
		resp acp.InitializeResponse
		err  error
	}
	ch := make(chan initResult, 1)
	go func() {
		resp, err := p.conn.Initialize(ctx, acp.InitializeRequest{
			ProtocolVersion: acp.ProtocolVersionNumber,
			ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true,
				// The window runs an agent's login in a terminal for the user:
				// both the protocol's terminal auth methods and the
				// "terminal-auth" _meta convention (claude-code-acp).
				Auth: acp.AuthCapabilities{Terminal: true}, Meta: map[string]any{"terminal-auth": true}},
			ClientInfo: &acp.Implementation{Name: "jarvis", Version: "1"},
		})
		ch <- initResult{resp, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, a.startFailure(ctx, p, "initialize", r.err)
		}
		if r.resp.ProtocolVersion != acp.ProtocolVersionNumber {
			a.stop(p)
			return nil, fmt.Errorf("acpagent: the agent speaks ACP version %d; Jarvis speaks version %d", r.resp.ProtocolVersion, acp.ProtocolVersionNumber)
		}
		p.loadSession = r.resp.AgentCapabilities.LoadSession
		p.images = r.resp.AgentCapabilities.PromptCapabilities.Image
		p.mcpHTTP = r.resp.AgentCapabilities.McpCapabilities.Http
		p.authMethods = r.resp.AuthMethods
		return p, nil
	case <-p.exited:
		return nil, a.startFailure(ctx, p, "initialize", nil)
	case <-p.guard.broken:
		return nil, a.startFailure(ctx, p, "initialize", nil)
	}
}

// startFailure stops p and explains why it could not start a session.
func (a *Agent) startFailure(ctx context.Context, p *process, step string, err error) error {
	if gerr := p.guard.error(); gerr != nil {
		a.stop(p)
		return fmt.Errorf("acpagent: %w during %s: %v", ErrProtocol, step, gerr)
	}
	var re *acp.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return a.authError(p, re)
	}
	if a.exitedSoon(p) {
		a.stop(p)
		msg := exitText(p.waitErr)
		if line := cliopts.FirstErrorLine(p.stderr.String()); line != "" {
			msg += ": " + line
		}
		return fmt.Errorf("acpagent: %w before answering %s (%s)", ErrExited, step, msg)
	}
	a.stop(p)
	if strings.Contains(p.stderr.String(), "cannot be used with root/sudo privileges") {
		// claude-code-acp run as root: its refusal, and what to do about it.
		return fmt.Errorf("acpagent: %s failed: the agent refuses to run as root (it printed: %s); run Jarvis as your own user, not as root or with sudo",
			step, firstLine(p.stderr.String()))
	}
	if ctx.Err() != nil && err != nil && errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("acpagent: the agent did not answer %s within %s", step, a.opts.InitTimeout)
	}
	return fmt.Errorf("acpagent: %s failed: %s", step, describe(err, p.stderr.String()))
}

// authError stops p and says which sign-in methods the agent offers.
func (a *Agent) authError(p *process, re *acp.RequestError) error {
	a.stop(p)
	ae := &AuthRequiredError{Detail: re.Message}
	for _, m := range p.authMethods {
		ae.Methods = append(ae.Methods, authHint(m))
		ae.Offered = append(ae.Offered, a.authMethod(m))
	}
	return ae
}

// authMethod is the description of an ACP auth method.
func (a *Agent) authMethod(m acp.AuthMethod) AuthMethod {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	var am AuthMethod
	var meta map[string]any
	switch {
	case m.EnvVar != nil:
		am = AuthMethod{ID: m.EnvVar.Id, Name: m.EnvVar.Name, Description: str(m.EnvVar.Description), Kind: "env_var"}
		for _, v := range m.EnvVar.Vars {
			am.Vars = append(am.Vars, v.Name)
		}
		meta = m.EnvVar.Meta
	case m.Terminal != nil:
		am = AuthMethod{ID: m.Terminal.Id, Name: m.Terminal.Name, Description: str(m.Terminal.Description), Kind: "terminal",
			Command: a.opts.Command, Args: append(append([]string{}, a.opts.Args...), m.Terminal.Args...), Env: stringValues(m.Terminal.Env)}
		meta = m.Terminal.Meta
	case m.Agent != nil:
		am = AuthMethod{ID: m.Agent.Id, Name: m.Agent.Name, Description: str(m.Agent.Description), Kind: "agent"}
		meta = m.Agent.Meta
	default:
		return AuthMethod{Kind: "unknown"}
	}
	// The "terminal-auth" convention: {command, args, label, env}.
	if t, ok := meta["terminal-auth"].(map[string]any); ok {
		if cmd, _ := t["command"].(string); cmd != "" {
			am.Kind, am.Command, am.Args, am.Vars = "terminal", cmd, nil, nil
			if args, ok := t["args"].([]any); ok {
				for _, x := range args {
					if s, ok := x.(string); ok {
						am.Args = append(am.Args, s)
					}
				}
			}
			am.Label, _ = t["label"].(string)
			if env, ok := t["env"].(map[string]any); ok {
				am.Env = stringValues(env)
			}
		}
	}
	return am
}

// stringValues keeps the string values of m.
func stringValues(m map[string]any) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// stop ends p's whole process group (session/cancel has been sent when a
// turn was running) and forgets it; the ACP session id is kept for
// session/load.
func (a *Agent) stop(p *process) {
	a.mu.Lock()
	if a.p == p {
		a.p = nil
	}
	a.mu.Unlock()
	stages := procstop.Stages()
	for i, s := range stages {
		select {
		case <-p.exited:
			p.tree.Kill(p.cmd)
			return
		default:
		}
		if err := p.tree.Signal(p.cmd, s); errors.Is(err, errors.ErrUnsupported) {
			continue
		}
		if i == len(stages)-1 {
			break
		}
		timer := time.NewTimer(a.opts.GracePeriod)
		select {
		case <-p.exited:
		case <-timer.C:
		}
		timer.Stop()
	}
	<-p.exited
	p.tree.Kill(p.cmd)
}

// Close ends the agent process, if any.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closed = true
	p := a.p
	a.mu.Unlock()
	if p != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		a.stop(p)
	}
	return nil
}

// Commands is the agent process's latest list of slash commands
// (available_commands_update, kept between turns); nil before any.
func (a *Agent) Commands() []SlashCommand {
	a.mu.Lock()
	p := a.p
	a.mu.Unlock()
	if p == nil || p.client == nil {
		return nil
	}
	return p.client.availableCommands()
}

// Running reports whether an agent process is up (for tests and status).
func (a *Agent) Running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.p != nil
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err != nil {
		return err.Error()
	}
	return "exit status 0"
}

var _ io.Writer = (*tailBuffer)(nil)

// SignInMethods are the sign-in methods the agent offers (initialize's
// authMethods), starting it when it is not running.
func (a *Agent) SignInMethods(ctx context.Context) ([]AuthMethod, error) {
	p, err := a.started(ctx)
	if err != nil {
		return nil, err
	}
	out := []AuthMethod{}
	for _, m := range p.authMethods {
		out = append(out, a.authMethod(m))
	}
	return out, nil
}

// started returns the running process, starting and initializing one when
// there is none (with no session: the next turn opens it).
func (a *Agent) started(ctx context.Context) (*process, error) {
	p, _, err := a.live()
	if err != nil || p != nil {
		return p, err
	}
	startCtx, cancel := context.WithTimeout(ctx, a.opts.InitTimeout)
	defer cancel()
	return a.start(startCtx)
}

// SignIn calls authenticate with one of the methods the agent offers,
// starting the agent when it is not running (the process is kept for the
// next turn). For a terminal method it comes after the user's login in the
// terminal: the agent reads what the login stored, and an agent that does
// not implement authenticate for it (claude-code-acp) is not an error. For
// an agent method the agent signs in itself (codex-acp's ChatGPT login
// opens the browser) before it answers, so ctx should allow for the user.
func (a *Agent) SignIn(ctx context.Context, methodID string) error {
	a.turnMu.Lock()
	defer a.turnMu.Unlock()
	p, err := a.started(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(p.authMethods, func(m acp.AuthMethod) bool { return a.authMethod(m).ID == methodID })
	if i < 0 {
		return fmt.Errorf("the agent does not offer the sign-in method %q", methodID)
	}
	m := a.authMethod(p.authMethods[i])
	_, err = p.conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: methodID})
	var re *acp.RequestError
	switch {
	case err == nil:
		return nil
	case m.Kind == "terminal" && errors.As(err, &re) && (re.Code == -32601 || re.Code == -32603):
		a.log.Info("acpagent: the agent does not implement authenticate for its terminal login; the login's own result counts", "method", methodID, "err", err)
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("the agent did not finish signing in with %q in time", m.Name)
	case authRequired(err):
		return fmt.Errorf("the agent still says you are not signed in with %q: the sign-in did not complete", m.Name)
	}
	return fmt.Errorf("the agent did not accept the sign-in with %q: %s", m.Name, describe(err, p.stderr.String()))
}
