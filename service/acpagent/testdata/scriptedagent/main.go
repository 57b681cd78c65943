// Command scriptedagent is an ACP agent for acpagent's tests, written with
// acp-go-sdk's agent side. Each prompt is a command:
//
//	stream              thought, two message chunks, a plan, a tool call that completes
//	perm                asks permission to run a command; answers allowed/denied/cancelled
//	read PATH           reads PATH through the client
//	write PATH TEXT     writes TEXT to PATH through the client
//	child               starts a detached `sleep` that ignores SIGINT/SIGTERM, writes its
//	                    pid to $SCRIPTED_DIR/child, and never ends the turn (ignores cancel)
//	bg                  starts `sleep 60` (in the agent's process group), writes its pid to
//	                    $SCRIPTED_DIR/bg, and ends the turn (the sleep keeps running)
//	crash               one chunk, then exits 3 mid-turn
//	malformed           writes a line that is not JSON
//	unknown             sends a notification with an unknown method
//	huge                sends a 2 MiB chunk
//	whoami              answers its pid and session id
//	term [cwd=D] [limit=N] PROG ARG…
//	                    runs PROG with ARGs in a terminal (cwd D, output limit N), reads
//	                    its output, waits, kills and releases it; answers what it got
//	termline LINE       the same with LINE as the command and no args
//	preamble            answers the blocks of this prompt before the last one, joined by "\n--\n"
//	abort               asks permission as codex-acp does (allow, or reject that aborts); a
//	                    rejection ends the turn with stopReason "cancelled", as codex does
//	images              answers the image blocks of this prompt ("images: image/png …")
//	exec                runs a command of its own (a tool call of kind execute with its
//	                    rawInput, completed) and one through the client's terminal
//	/NAME INPUT         one of its slash commands (SCRIPTED_COMMANDS=1): answers
//	                    "ran /NAME with input: INPUT (first block: yes|no)"
//	morecommands        sends a new command list (adds "compact") during the turn
//	mode                answers the session's mode and model ("mode=ask model=small")
//	leaveplan           switches itself to mode "code" (current_mode_update)
//	edit PATH TEXT      an edit tool call whose content is a diff of PATH, written with
//	                    TEXT through the client (fs/write_text_file), completed
//	selfedit PATH TEXT  the same, the file written by the agent itself
//	mcp TOOL JSON       calls TOOL with the JSON arguments on the first MCP server the
//	                    session was given (HTTP, with its headers; else stdio, the
//	                    command started with its environment); answers the result, after
//	                    `stdio["ARGV"…] ` for a stdio server
//
// Environment: SCRIPTED_AUTH=1 refuses session/new (authentication
// required) unless authenticate was called with "anthropic-api-key" and
// ANTHROPIC_API_KEY is set; SCRIPTED_NOINIT=1 never answers initialize; SCRIPTED_LOAD=1
// offers session/load; SCRIPTED_IMAGES=1 accepts images in prompts;
// SCRIPTED_COMMANDS=1 sends available_commands_update (review, with an
// input hint, and init) right after session/new, as claude-code-acp does.
// SCRIPTED_MODES=1 offers the modes ask, code and plan (ask first) and the
// models small and large (small first), with set_mode and set_model;
// SCRIPTED_MCP_HTTP=1 takes MCP servers over HTTP (mcpCapabilities.http).
// SCRIPTED_AUTH=terminal refuses session/new until the file
// $SCRIPTED_DIR/credentials exists, and, to a client that announces the
// "terminal-auth" _meta, offers the login "scripted-login" as
// claude-code-acp does: its own binary with the argument "login" (which
// writes that file, its path given in the method's env, and exits 0; or
// exits 1 when the file's folder holds "refuse"); its authenticate says
// "Method not implemented." as claude-code-acp's does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type agent struct {
	authed   bool
	conn     *acp.AgentSideConnection
	sessions map[string]bool
	n        int // sessions created
	mode     map[string]string
	model    map[string]string
	mcp      map[string][]acp.McpServer // the MCP servers each session was given
}

var (
	modes  = []acp.SessionMode{{Id: "ask", Name: "Ask"}, {Id: "code", Name: "Code"}, {Id: "plan", Name: "Plan"}}
	models = []acp.ModelInfo{{ModelId: "small", Name: "Small"}, {ModelId: "large", Name: "Large"}}
)

// offers gives a session's modes and models (SCRIPTED_MODES=1).
func (a *agent) offers(sid string) (*acp.SessionModeState, *acp.SessionModelState) {
	if os.Getenv("SCRIPTED_MODES") != "1" {
		return nil, nil
	}
	if a.mode[sid] == "" {
		a.mode[sid], a.model[sid] = "ask", "small"
	}
	return &acp.SessionModeState{AvailableModes: modes, CurrentModeId: acp.SessionModeId(a.mode[sid])},
		&acp.SessionModelState{AvailableModels: models, CurrentModelId: acp.ModelId(a.model[sid])}
}

func (a *agent) UnstableSetSessionModel(_ context.Context, r acp.UnstableSetSessionModelRequest) (acp.UnstableSetSessionModelResponse, error) {
	for _, m := range models {
		if string(m.ModelId) == string(r.ModelId) {
			a.model[string(r.SessionId)] = string(r.ModelId)
			return acp.UnstableSetSessionModelResponse{}, nil
		}
	}
	return acp.UnstableSetSessionModelResponse{}, acp.NewInvalidParams(map[string]any{"error": "no such model"})
}

func (a *agent) Authenticate(_ context.Context, r acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if r.MethodId == "scripted-login" {
		return acp.AuthenticateResponse{}, acp.NewInternalError(map[string]any{"error": "Method not implemented."})
	}
	if r.MethodId != "anthropic-api-key" || os.Getenv("ANTHROPIC_API_KEY") == "" {
		return acp.AuthenticateResponse{}, acp.NewAuthRequired(nil)
	}
	a.authed = true
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) Initialize(ctx context.Context, r acp.InitializeRequest) (acp.InitializeResponse, error) {
	if os.Getenv("SCRIPTED_NOINIT") == "1" {
		<-ctx.Done()
		select {}
	}
	desc := "Sign in with your Claude account"
	login := &acp.AuthMethodAgent{Id: "claude-login", Name: "Log in with Claude Code", Description: &desc}
	if os.Getenv("SCRIPTED_AUTH") == "terminal" {
		run := "Run `scripted login` in the terminal"
		login = &acp.AuthMethodAgent{Id: "scripted-login", Name: "Log in with Scripted", Description: &run}
		if r.ClientCapabilities.Meta["terminal-auth"] == true {
			login.Meta = map[string]any{"terminal-auth": map[string]any{"command": os.Args[0], "args": []string{"login"}, "label": "Scripted Login",
				"env": map[string]string{"SCRIPTED_CREDENTIALS": credentials()}}}
		}
	}
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: os.Getenv("SCRIPTED_LOAD") == "1",
			PromptCapabilities: acp.PromptCapabilities{Image: os.Getenv("SCRIPTED_IMAGES") == "1"},
			McpCapabilities:    acp.McpCapabilities{Http: os.Getenv("SCRIPTED_MCP_HTTP") == "1"}},
		AuthMethods: []acp.AuthMethod{
			{Agent: login},
			{EnvVar: &acp.AuthMethodEnvVarInline{Id: "anthropic-api-key", Name: "Use an API key", Vars: []acp.AuthEnvVar{{Name: "ANTHROPIC_API_KEY"}}}},
		},
	}, nil
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) NewSession(_ context.Context, r acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if os.Getenv("SCRIPTED_AUTH") == "1" && !a.authed {
		return acp.NewSessionResponse{}, acp.NewAuthRequired(nil)
	}
	if _, err := os.Stat(credentials()); os.Getenv("SCRIPTED_AUTH") == "terminal" && err != nil {
		return acp.NewSessionResponse{}, acp.NewAuthRequired(nil)
	}
	a.n++
	id := fmt.Sprintf("sess-%d-%d", os.Getpid(), a.n)
	a.sessions[id] = true
	a.mcp[id] = r.McpServers
	md, ml := a.offers(id)
	if os.Getenv("SCRIPTED_COMMANDS") == "1" {
		a.say(context.Background(), acp.SessionId(id), commandsUpdate(false)) // before the answer, as an agent may
	}
	return acp.NewSessionResponse{SessionId: acp.SessionId(id), Modes: md, Models: ml}, nil
}

func (a *agent) LoadSession(ctx context.Context, r acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	// A real agent replays the conversation; the client must not show it.
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: r.SessionId, Update: acp.UpdateAgentMessageText("old history")})
	a.sessions[string(r.SessionId)] = true
	md, ml := a.offers(string(r.SessionId))
	return acp.LoadSessionResponse{Modes: md, Models: ml}, nil
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *agent) SetSessionMode(_ context.Context, r acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	for _, m := range modes {
		if m.Id == r.ModeId {
			a.mode[string(r.SessionId)] = string(r.ModeId)
			return acp.SetSessionModeResponse{}, nil
		}
	}
	return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": "no such mode"})
}

// commandsUpdate is the agent's command list; more adds "compact".
func commandsUpdate(more bool) acp.SessionUpdate {
	cmds := []acp.AvailableCommand{
		{Name: "review", Description: "Review the changes", Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "what to review"}}},
		{Name: "init", Description: "Write AGENTS.md"},
	}
	if more {
		cmds = append(cmds, acp.AvailableCommand{Name: "compact", Description: "Summarize the conversation"})
	}
	return acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: cmds}}
}

func (a *agent) say(ctx context.Context, sid acp.SessionId, u acp.SessionUpdate) {
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: u})
}

func (a *agent) Prompt(ctx context.Context, r acp.PromptRequest) (acp.PromptResponse, error) {
	sid := r.SessionId
	if !a.sessions[string(sid)] {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	// The command is the last block: Jarvis puts its instructions and a
	// summary of the conversation in blocks before it.
	var blocks []string
	for _, b := range r.Prompt {
		if b.Text != nil {
			blocks = append(blocks, b.Text.Text)
		}
	}
	var text string
	if len(blocks) > 0 {
		text = blocks[len(blocks)-1]
	}
	cmd, arg, _ := strings.Cut(text, " ")
	end := acp.PromptResponse{StopReason: acp.StopReasonEndTurn}
	if len(blocks) > 0 && strings.HasPrefix(blocks[0], "/") {
		// A slash command is the prompt's first block.
		name, input, _ := strings.Cut(blocks[0], " ")
		first := "yes"
		if len(blocks) > 1 {
			first = fmt.Sprintf("yes, before %d more", len(blocks)-1)
		}
		a.say(ctx, sid, acp.UpdateAgentMessageText(fmt.Sprintf("ran %s with input: %s (first block: %s)", name, input, first)))
		return end, nil
	}
	if strings.HasPrefix(text, "/") {
		a.say(ctx, sid, acp.UpdateAgentMessageText("a slash command that was not the first block (first block: no)"))
		return end, nil
	}
	switch cmd {
	case "morecommands":
		a.say(ctx, sid, commandsUpdate(true))
		a.say(ctx, sid, acp.UpdateAgentMessageText("three commands now"))
	case "stream":
		a.say(ctx, sid, acp.UpdateAgentThoughtText("Thinking it over."))
		a.say(ctx, sid, acp.UpdateAgentMessageText("Hello, "))
		a.say(ctx, sid, acp.UpdatePlan(acp.PlanEntry{Content: "look", Status: acp.PlanEntryStatusInProgress, Priority: acp.PlanEntryPriorityHigh}, acp.PlanEntry{Content: "fix", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityLow}))
		a.say(ctx, sid, acp.StartToolCall("call_1", "List files", acp.WithStartKind(acp.ToolKindSearch), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		a.say(ctx, sid, acp.UpdateToolCall("call_1", acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
		a.say(ctx, sid, acp.UpdateAgentMessageText("world."))
	case "perm":
		title := "Run rm -rf build"
		kind := acp.ToolKindExecute
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: sid,
			ToolCall: acp.ToolCallUpdate{ToolCallId: "call_rm", Title: &title, Kind: &kind, RawInput: map[string]any{"command": "rm -rf build"}},
			Options: []acp.PermissionOption{
				{OptionId: "always", Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
				{OptionId: "once", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "no", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
			}})
		switch {
		case err != nil:
			a.say(ctx, sid, acp.UpdateAgentMessageText("error: "+err.Error()))
		case resp.Outcome.Selected != nil:
			a.say(ctx, sid, acp.UpdateAgentMessageText("selected "+string(resp.Outcome.Selected.OptionId)))
		default:
			a.say(ctx, sid, acp.UpdateAgentMessageText("cancelled"))
		}
	case "abort":
		title := "Run make clean"
		kind := acp.ToolKindExecute
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: sid,
			ToolCall: acp.ToolCallUpdate{ToolCallId: "call_clean", Title: &title, Kind: &kind, RawInput: map[string]any{"command": []string{"make", "clean"}}},
			Options: []acp.PermissionOption{
				{OptionId: "approved", Name: "Yes", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "abort", Name: "No, and tell Codex what to do differently", Kind: acp.PermissionOptionKindRejectOnce},
			}})
		if err != nil || resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != "approved" {
			a.say(ctx, sid, acp.UpdateAgentMessageText("I wanted to clean. "))
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		a.say(ctx, sid, acp.UpdateAgentMessageText("cleaned"))
	case "images":
		var got []string
		for _, b := range r.Prompt {
			if b.Image != nil {
				got = append(got, fmt.Sprintf("%s:%d", b.Image.MimeType, len(b.Image.Data)))
			}
		}
		a.say(ctx, sid, acp.UpdateAgentMessageText("images: "+strings.Join(got, " ")))
	case "exec":
		a.say(ctx, sid, acp.StartToolCall("call_exec", "ls -la", acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress),
			acp.WithStartRawInput(map[string]any{"command": []string{"ls", "-la"}, "cwd": "/work"})))
		a.say(ctx, sid, acp.UpdateToolCall("call_exec", acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
		a.say(ctx, sid, acp.StartToolCall("call_fail", "false", acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		a.say(ctx, sid, acp.UpdateToolCall("call_fail", acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		a.say(ctx, sid, acp.StartToolCall("call_term", "echo hi", acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		t, err := a.conn.CreateTerminal(ctx, acp.CreateTerminalRequest{SessionId: sid, Command: "echo", Args: []string{"hi"}})
		if err != nil {
			a.say(ctx, sid, acp.UpdateAgentMessageText("terminal failed: "+err.Error()))
			break
		}
		a.say(ctx, sid, acp.UpdateToolCall("call_term", acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent([]acp.ToolCallContent{{Terminal: &acp.ToolCallContentTerminal{TerminalId: t.TerminalId, Type: "terminal"}}})))
		a.say(ctx, sid, acp.UpdateAgentMessageText("ran"))
	case "read":
		resp, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: arg})
		if err != nil {
			a.say(ctx, sid, acp.UpdateAgentMessageText("read failed: "+err.Error()))
		} else {
			a.say(ctx, sid, acp.UpdateAgentMessageText("read: "+resp.Content))
		}
	case "write":
		path, content, _ := strings.Cut(arg, " ")
		if _, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content}); err != nil {
			a.say(ctx, sid, acp.UpdateAgentMessageText("write failed: "+err.Error()))
		} else {
			a.say(ctx, sid, acp.UpdateAgentMessageText("wrote "+path))
		}
	case "child":
		c := exec.Command("sh", "-c", `trap "" INT TERM HUP; sleep 60; :`)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			return end, err
		}
		_ = os.WriteFile(filepath.Join(os.Getenv("SCRIPTED_DIR"), "child"), []byte(fmt.Sprint(c.Process.Pid)), 0o644)
		a.say(ctx, sid, acp.UpdateAgentMessageText("started"))
		select {} // ignores session/cancel
	case "bg":
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			return end, err
		}
		go c.Wait()
		_ = os.WriteFile(filepath.Join(os.Getenv("SCRIPTED_DIR"), "bg"), []byte(fmt.Sprint(c.Process.Pid)), 0o644)
		a.say(ctx, sid, acp.UpdateAgentMessageText(fmt.Sprintf("pid=%d", os.Getpid())))
	case "crash":
		a.say(ctx, sid, acp.UpdateAgentMessageText("partial"))
		fmt.Fprintln(os.Stderr, "panic: scripted crash")
		os.Exit(3)
	case "malformed":
		fmt.Fprintln(os.Stdout, "this is not json")
		select {}
	case "unknown":
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","method":"session/bogus","params":{}}`)
		select {}
	case "huge":
		a.say(ctx, sid, acp.UpdateAgentMessageText(strings.Repeat("x", 2<<20)))
		select {}
	case "preamble":
		a.say(ctx, sid, acp.UpdateAgentMessageText("preamble:\n"+strings.Join(blocks[:len(blocks)-1], "\n--\n")))
	case "term", "termline":
		req := acp.CreateTerminalRequest{SessionId: sid}
		words := strings.Fields(arg)
		for len(words) > 0 && strings.Contains(words[0], "=") {
			k, v, _ := strings.Cut(words[0], "=")
			switch k {
			case "cwd":
				req.Cwd = &v
			case "limit":
				var n int
				fmt.Sscan(v, &n)
				req.OutputByteLimit = &n
			}
			words = words[1:]
		}
		if cmd == "termline" {
			req.Command = strings.Join(words, " ")
		} else if len(words) > 0 {
			req.Command, req.Args = words[0], words[1:]
		}
		a.say(ctx, sid, acp.UpdateAgentMessageText(a.terminal(ctx, req)))
	case "mode":
		a.say(ctx, sid, acp.UpdateAgentMessageText(fmt.Sprintf("mode=%s model=%s", a.mode[string(sid)], a.model[string(sid)])))
	case "leaveplan":
		a.mode[string(sid)] = "code"
		a.say(ctx, sid, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: "code"}})
		a.say(ctx, sid, acp.UpdateAgentMessageText("coding now"))
	case "edit", "selfedit":
		path, content, _ := strings.Cut(arg, " ")
		old, err := os.ReadFile(path)
		diff := acp.ToolDiffContent(path, content)
		if err == nil {
			diff = acp.ToolDiffContent(path, content, string(old))
		}
		a.say(ctx, sid, acp.StartToolCall("call_edit", "Edit "+filepath.Base(path), acp.WithStartKind(acp.ToolKindEdit),
			acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartContent([]acp.ToolCallContent{diff})))
		if cmd == "edit" {
			_, err = a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content})
		} else {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			a.say(ctx, sid, acp.UpdateToolCall("call_edit", acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
			a.say(ctx, sid, acp.UpdateAgentMessageText("edit failed: "+err.Error()))
			break
		}
		a.say(ctx, sid, acp.UpdateToolCall("call_edit", acp.WithUpdateStatus(acp.ToolCallStatusCompleted), acp.WithUpdateContent([]acp.ToolCallContent{diff})))
		a.say(ctx, sid, acp.UpdateAgentMessageText("edited "+path))
	case "mcp":
		tool, args, _ := strings.Cut(arg, " ")
		a.say(ctx, sid, acp.UpdateAgentMessageText(a.callMCP(ctx, string(sid), tool, args)))
	case "whoami":
		a.say(ctx, sid, acp.UpdateAgentMessageText(fmt.Sprintf("pid=%d session=%s", os.Getpid(), sid)))
	default:
		a.say(ctx, sid, acp.UpdateAgentMessageText("echo: "+text))
	}
	return end, nil
}

// terminal runs req's command through the client's terminal methods and
// describes what each answered.
func (a *agent) terminal(ctx context.Context, req acp.CreateTerminalRequest) string {
	sid := req.SessionId
	t, err := a.conn.CreateTerminal(ctx, req)
	if err != nil {
		return "terminal failed: " + err.Error()
	}
	id := t.TerminalId
	out, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	if err != nil {
		return "output failed: " + err.Error()
	}
	exit, err := a.conn.WaitForTerminalExit(ctx, acp.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
	if err != nil || exit.ExitCode == nil {
		return fmt.Sprintf("wait failed: %v", err)
	}
	if _, err := a.conn.KillTerminal(ctx, acp.KillTerminalRequest{SessionId: sid, TerminalId: id}); err != nil {
		return "kill failed: " + err.Error()
	}
	if _, err := a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: sid, TerminalId: id}); err != nil {
		return "release failed: " + err.Error()
	}
	_, after := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	return fmt.Sprintf("exit=%d truncated=%v released=%v output=%q", *exit.ExitCode, out.Truncated, after != nil, out.Output)
}

// credentials is the file the terminal login writes.
func credentials() string { return filepath.Join(os.Getenv("SCRIPTED_DIR"), "credentials") }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "login" { // the terminal login (SCRIPTED_AUTH=terminal)
		path := os.Getenv("SCRIPTED_CREDENTIALS")
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "refuse")); err == nil || path == "" {
			fmt.Println("Login refused.")
			os.Exit(1)
		}
		if err := os.WriteFile(path, []byte("signed in\n"), 0o600); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("Signed in.")
		return
	}
	a := &agent{sessions: map[string]bool{}, mode: map[string]string{}, model: map[string]string{}, mcp: map[string][]acp.McpServer{}}
	a.conn = acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	<-a.conn.Done()
}

// headers adds an MCP server's headers to each request.
type headers struct {
	h    []acp.HttpHeader
	next http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, h := range t.h {
		r.Header.Set(h.Name, h.Value)
	}
	return t.next.RoundTrip(r)
}

// callMCP calls tool on the session's first MCP server (HTTP, else
// stdio) and describes what it answered.
func (a *agent) callMCP(ctx context.Context, sid, tool, args string) string {
	var t mcp.Transport
	via := "" // a stdio server's argv, said before the answer
	for _, m := range a.mcp[sid] {
		if m.Http != nil {
			t = &mcp.StreamableClientTransport{Endpoint: m.Http.Url, DisableStandaloneSSE: true, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: headers{m.Http.Headers, http.DefaultTransport}}}
			break
		}
		if m.Stdio != nil {
			cmd := exec.Command(m.Stdio.Command, m.Stdio.Args...)
			cmd.Env = os.Environ()
			for _, e := range m.Stdio.Env {
				cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
			}
			cmd.Stderr = os.Stderr
			t = &mcp.CommandTransport{Command: cmd}
			via = fmt.Sprintf("stdio%q ", append([]string{m.Stdio.Command}, m.Stdio.Args...))
			break
		}
	}
	if t == nil {
		return "no MCP server was given"
	}
	var in map[string]any
	if args != "" {
		if err := json.Unmarshal([]byte(args), &in); err != nil {
			return "bad arguments: " + err.Error()
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "scriptedagent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return "mcp connect failed: " + err.Error()
	}
	defer cs.Close()
	var names []string
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "mcp tools/list failed: " + err.Error()
	}
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: in})
	if err != nil {
		return "mcp call failed: " + err.Error()
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	return fmt.Sprintf("%stools=%s error=%v result=%s", via, strings.Join(names, ","), res.IsError, strings.Join(text, " "))
}
