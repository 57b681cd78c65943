// Package acprt is the ACP runtime: chat agents whose provider is "acp" are Agent Client
// Protocol agents (package acpagent), one process per Jarvis session kept
// between turns. The agent's stream becomes assistant.delta, thinking and
// status events (kind "tool", and "plan" for its plan); everything it asks
// of its client goes to the desktop as a tool.request answered through
// POST /v1/tools/result, like a model's tool call: its permission requests
// as agent_permission (source "service": the gate's answer is the
// permission), its file reads and writes as read_file and write_file (the
// desktop's executor serves them within its workspace, through the gate),
// its terminals as run_command (run to their end by the desktop).
// So the gate, the policy, the prompt and the audit log decide, and any
// client of the service can play the gate. It gets a turn.Env and what
// New's Options name, never the service.
package acprt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"jarvis/api"
	"jarvis/service/acpagent"
	"jarvis/service/catalog"
	"jarvis/service/config"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/tools"
)

// Options is what the runtime needs from the service beyond its turn.Env.
type Options struct {
	// Waiter pauses a turn on the agent's requests until the desktop answers.
	Waiter *toolwait.Waiter
	// Instructions is what the agent is told besides the user's message
	// (the base prompt, skills and memory); InstructionsKey identifies it
	// apart from memory: a change starts a new ACP session.
	Instructions    func(*config.Config, config.Agent) string
	InstructionsKey func(*config.Config, config.Agent) string
	// Catalog is the desktop's MCP tools, offered to ACP agents through
	// Jarvis's MCP endpoint (mcp.go); nil: no endpoint.
	Catalog *catalog.Catalog
	// PutSecret stores a sign-in key in the secret store (signin.go).
	PutSecret func(ref, value string) (where string, err error)
	// Red removes secret values from the lines kept with the conversation
	// (a diff card's file text); nil keeps them as they are.
	Red *redact.Set
	// Bridge is the argv of the stdio MCP bridge (bridge.go, BridgeHelper),
	// given to agents that take MCP servers only over stdio; nil: such
	// agents get no MCP endpoint.
	Bridge []string
}

// Runtime runs ACP agents: one process per Jarvis session, kept between turns.
type Runtime struct {
	env    turn.Env
	opts   Options
	mu     sync.Mutex
	bySess map[string]*acpEntry
	// closing are the agents being stopped in the background (replaced,
	// or their session deleted or cleared); Close waits for them.
	closing sync.WaitGroup
	mcp     mcpState
	signIn  map[string][]acpagent.AuthMethod // agent id -> the methods it offered (signin.go)
}

// New returns the ACP runtime.
func New(env turn.Env, opts Options) *Runtime { return &Runtime{env: env, opts: opts} }

type acpEntry struct {
	a       *acpagent.Agent
	key     string // the config it was started with: a change restarts it
	mcpHash string // its MCP token's hash (mcp.go), revoked with it
	// commands are the slash commands last published (agent.commands), as JSON.
	commands string
	// mode and model are the agent's current ones as the transcript last
	// said them (choices.go); "" before its session's first.
	mode, model string
}

// acpAgent returns the session's agent, starting afresh when its config changed.
func (rt *Runtime) agentFor(sessionID string, agent config.Agent, ch config.Chat) (*acpagent.Agent, error) {
	env, dir, err := rt.launch(agent, ch)
	if err != nil {
		return nil, err
	}
	// Jarvis's MCP endpoint is given once the desktop has MCP tools: when
	// they appear, the agent is started again (its session resumed).
	withMCP := rt.opts.Catalog != nil && len(rt.opts.Catalog.Definitions()) > 0
	keyB, err := json.Marshal([]any{ch.Command, ch.Args, env, dir, withMCP})
	if err != nil {
		return nil, err
	}
	key := string(keyB)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.bySess == nil {
		rt.bySess = map[string]*acpEntry{}
	}
	if e := rt.bySess[sessionID]; e != nil {
		if e.key == key {
			return e.a, nil
		}
		rt.revoke(e.mcpHash)
		rt.closing.Go(func() { _ = e.a.Close() })
	}
	var servers []acpagent.MCPServer
	var hash string
	if withMCP {
		servers, hash = rt.mcpFor(sessionID, agent)
	}
	a, err := acpagent.New(acpagent.Options{Command: ch.Command, Args: ch.Args, Env: env, WorkDir: dir, Logger: rt.env.Log,
		Resume: rt.lastACPSession(sessionID), MCP: servers})
	if err != nil {
		rt.revoke(hash)
		return nil, err
	}
	rt.bySess[sessionID] = &acpEntry{a: a, key: key, mcpHash: hash}
	return a, nil
}

// launch is what the agent is started with: its environment (chat.env,
// secrets read, and the keys given in the window) and its working folder.
func (rt *Runtime) launch(agent config.Agent, ch config.Chat) ([]string, string, error) {
	dir := ch.WorkDir
	if dir == "" {
		dir = filepath.Join(rt.env.DataDir, "acp", agent.AgentID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, "", fmt.Errorf("could not create the agent's working folder: %w", err)
		}
	}
	var env []string
	for k, v := range ch.Env {
		if ref, ok := strings.CutPrefix(v, "secret:"); ok {
			if rt.env.Secrets == nil {
				return nil, "", fmt.Errorf("env %s names the secret %q, and there is no secret store", k, ref)
			}
			val, err := rt.env.Secrets.Get(ref)
			if err != nil {
				return nil, "", fmt.Errorf("env %s: the secret %q cannot be read: %w", k, ref, err)
			}
			v = val
		}
		env = append(env, k+"="+v)
	}
	env = rt.signInEnv(agent.AgentID, ch.Env, env) // keys given in the window (signin.go)
	sort.Strings(env)
	return env, dir, nil
}

// Drop stops the session's agent and its whole process group, in the
// background: the session was deleted or cleared, so its conversation with
// the agent is over; a later turn starts a new one.
func (rt *Runtime) Drop(sessionID string) {
	rt.mu.Lock()
	e := rt.bySess[sessionID]
	delete(rt.bySess, sessionID)
	rt.mu.Unlock()
	if e != nil {
		rt.revoke(e.mcpHash)
		rt.closing.Go(func() { _ = e.a.Close() })
	}
}

// Close ends every ACP agent process (service shutdown).
func (rt *Runtime) Close() {
	rt.mu.Lock()
	entries := rt.bySess
	rt.bySess = nil
	rt.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		rt.revoke(e.mcpHash)
		wg.Go(func() { _ = e.a.Close() })
	}
	wg.Wait()
	rt.closing.Wait()
}

// Status is an ACP agent's status for GET /v1/agents: ok when its
// command is found, unconfigured (saying which command) when it is not.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	ch := rt.env.Config().ResolvedChat(a)
	if _, err := exec.LookPath(ch.Command); err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: fmt.Sprintf("the agent's command %q was not found: %v", ch.Command, err)}
	}
	return api.AgentStatus{State: "ok"}
}

// Validate says why an agent cannot run (its command is not found), or nil.
func (rt *Runtime) Validate(a config.Agent) error { return turn.Unconfigured(rt.Status(a)) }

// Describe adds the agent's provider and model.
func (rt *Runtime) Describe(a config.Agent, info *api.AgentInfo) {
	turn.DescribeModel(rt.env.Config(), a, info)
}

// Outbound: an ACP agent is a program on this computer that runs its own tools.
func (rt *Runtime) Outbound(_ *config.Config, a config.Agent) string {
	return fmt.Sprintf("ACP agent %q (a program on this computer that runs its own tools)", a.AgentID)
}

// Run is the runtime of chat agents with the acp provider; the turn's
// start is stored before it runs.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	c := rt.env.Config()
	ch := c.ResolvedChat(agent)
	a, err := rt.agentFor(t.SessionID, agent, ch)
	if err != nil {
		return turn.Failed("acp_failed", "Agent %q (acp): %v", agent.AgentID, err)
	}
	in := acpagent.Input{Text: t.User.Content, Images: turn.Images(t.User.Meta), Instructions: rt.opts.Instructions(c, agent), InstructionsKey: rt.opts.InstructionsKey(c, agent),
		History: func() []acpagent.Message { return rt.history(t) }}
	in.Mode, in.Model = chosen(sess) // the user's choice, kept with the session (choices.go)
	// A coding agent reads files, pages and tool output itself, where Jarvis
	// cannot see: its context counts as untrusted (service/provenance), so
	// its calls that would send data out ask before they run.
	t.Taint.Add(api.Source{Kind: "agent", Name: agent.AgentID, Detail: "a coding agent reads files and the web itself"})
	host := &acpHost{w: rt.opts.Waiter, t: t, agent: agent}
	defer rt.running(t)() // its MCP calls belong to this turn (mcp.go)
	ran := 0
	res, err := a.Prompt(ctx, in, host, func(ev acpagent.Event) {
		switch {
		case ev.TextDelta != "":
			rt.env.Publisher.Publish(t.SessionID, api.EventDelta, api.TextEvent{Text: ev.TextDelta, TurnID: t.ID})
		case ev.ThoughtDelta != "":
			t.Stats.AddThinking(ev.ThoughtDelta)
		case ev.Status != "":
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: agent.DisplayName + " " + ev.Status, Kind: "tool", TurnID: t.ID})
		case ev.Plan != nil:
			steps := make([]api.PlanStep, 0, len(ev.Plan))
			for _, e := range ev.Plan {
				steps = append(steps, api.PlanStep(e))
			}
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: planText(ev.Plan), Kind: "plan", TurnID: t.ID, Plan: steps})
		case ev.Notice != "":
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: agent.DisplayName + ": " + ev.Notice, Kind: "agent_status", TurnID: t.ID})
		case ev.AgentTool != nil:
			ran++
			rt.publishAgentTool(t, agent, ran, *ev.AgentTool)
		case ev.Commands != nil:
			rt.publishCommands(t, ev.Commands)
		case ev.Choices != nil:
			c := apiChoices(*ev.Choices)
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: choicesText(agent.DisplayName, *ev.Choices), Kind: "agent_choices", TurnID: t.ID, Choices: &c})
			rt.choiceSeen(t.SessionID, t.ID, agent.DisplayName, c, false)
		case ev.Diff != nil:
			text, d := diffText(agent.DisplayName, *ev.Diff), apiDiff(*ev.Diff)
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: text, Kind: "diff", TurnID: t.ID, Diff: d})
			rt.keep(t.SessionID, t.ID, text, diffLine{Kind: "diff", Diff: d})
		}
	})
	// Agents send their commands right after session/new, often before the
	// turn begins: the latest list, if not published yet.
	rt.publishCommands(t, a.Commands())
	if note := acpSessionNote(agent.DisplayName, res); note != "" {
		rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: note, Kind: "agent_status", TurnID: t.ID})
	}
	if err != nil {
		if strings.TrimSpace(res.Text) != "" { // keep what the user saw
			if _, serr := rt.env.Store.AddMessage(context.Background(), store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: res.Text, Meta: `{"acp":{"partial":true}}`}); serr != nil {
				rt.env.Log.Error("store partial acp answer", "err", serr)
			}
		}
		var ae *acpagent.AuthRequiredError
		switch {
		case ctx.Err() != nil:
			return turn.Failed("cancelled", "Stopped: the turn was cancelled, and the agent's processes were ended.")
		case errors.As(err, &ae):
			rt.offered(agent.AgentID, ae.Offered)
			return turn.Failed("acp_auth_required", "Agent %q: %v", agent.AgentID, err)
		case errors.Is(err, acpagent.ErrProtocol):
			return turn.Failed("acp_protocol", "Agent %q broke the Agent Client Protocol (%v); the next turn starts it again.", agent.AgentID, err)
		case errors.Is(err, acpagent.ErrExited):
			return turn.Failed("acp_exited", "Agent %q: %v", agent.AgentID, err)
		}
		return turn.Failed("acp_failed", "Agent %q: %v", agent.AgentID, err)
	}
	if strings.TrimSpace(res.Text) == "" && len(res.Denied) > 0 {
		res.Text = fmt.Sprintf("(You denied %s; %s stopped there.)", strings.Join(res.Denied, "; "), agent.DisplayName)
	}
	if strings.TrimSpace(res.Text) == "" {
		return turn.Failed("acp_failed", "Agent %q ended the turn (%s) without a reply.", agent.AgentID, res.StopReason)
	}
	var m acpMeta
	m.ACP.SessionID, m.ACP.StopReason, m.ACP.InstructionsKey = res.SessionID, res.StopReason, in.InstructionsKey
	meta, _ := json.Marshal(m)
	answer := store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: res.Text, Meta: string(meta)}
	return turn.Outcome{Final: res.Text, Last: &answer}
}

// publishCommands publishes the agent's slash commands (agent.commands)
// unless they are the ones last published for the session.
func (rt *Runtime) publishCommands(t *turn.Turn, cmds []acpagent.SlashCommand) {
	b, err := json.Marshal(cmds)
	if err != nil {
		return
	}
	rt.mu.Lock()
	e := rt.bySess[t.SessionID]
	if e == nil || e.commands == string(b) || (cmds == nil && e.commands == "") {
		rt.mu.Unlock()
		return
	}
	e.commands = string(b)
	rt.mu.Unlock()
	out := make([]api.AgentCommand, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, api.AgentCommand(c))
	}
	rt.env.Publisher.Publish(t.SessionID, api.EventAgentCommands, api.AgentCommandsEvent{Commands: out, TurnID: t.ID})
}

// publishAgentTool reports one command the ACP agent ran itself, inside
// its own program and sandbox (codex's exec_command), not through Jarvis's
// terminals: a tool.result with source "agent" (no tool.request came
// first), which the desktop shows as a card and writes to its audit log as
// "ran inside the agent, not gated" — as for the CLI agents.
func (rt *Runtime) publishAgentTool(t *turn.Turn, agent config.Agent, n int, at acpagent.AgentTool) {
	name := at.Title
	if name == "" {
		name = "command"
	}
	r := api.ToolResult{ID: fmt.Sprintf("agt_%s_%d", t.ID, n), OK: at.OK, Source: "agent", TurnID: t.ID, Name: name,
		Arguments: at.Input, Result: fmt.Sprintf("ran inside %s, not gated", agent.DisplayName)}
	if !at.OK {
		msg := fmt.Sprintf("%s reported that the command failed", agent.DisplayName)
		r.Error = &msg
	}
	rt.env.Publisher.Publish(t.SessionID, api.EventToolResult, r)
}

func planText(plan []acpagent.PlanEntry) string {
	var b strings.Builder
	b.WriteString("Plan:")
	for _, e := range plan {
		mark := "[ ]"
		switch e.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[~]"
		}
		fmt.Fprintf(&b, "\n%s %s", mark, e.Content)
	}
	return b.String()
}

// acpHost serves an ACP agent's requests through the desktop's gate.
type acpHost struct {
	w     *toolwait.Waiter
	t     *turn.Turn
	agent config.Agent
}

func (h *acpHost) RequestPermission(ctx context.Context, p acpagent.Permission) (bool, error) {
	args := tools.AgentPermissionArgs{Agent: h.agent.AgentID, Title: p.Title, Kind: p.Kind, Locations: p.Locations}
	if p.RawInput != nil {
		in, err := json.Marshal(p.RawInput)
		if err != nil {
			return false, err
		}
		args.Input = in
	}
	b, err := json.Marshal(args)
	if err != nil {
		return false, err
	}
	r := h.w.Ask(ctx, h.t, tools.AgentPermissionTool, b, string(tools.Risky), p.Title, "service", h.agent.DisplayName+" (its own tool)")
	return r.OK, resultErr(r)
}

func (h *acpHost) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	b, _ := json.Marshal(map[string]string{"path": path})
	r := h.w.Ask(ctx, h.t, "read_file", b, "safe", h.agent.DisplayName+" reads a file", "", "")
	if err := resultErr(r); err != nil {
		return "", err
	}
	text := r.Result
	if line > 0 || limit > 0 {
		lines := strings.Split(text, "\n")
		start := min(max(line-1, 0), len(lines))
		end := len(lines)
		if limit > 0 && start+limit < end {
			end = start + limit
		}
		text = strings.Join(lines[start:end], "\n")
	}
	return text, nil
}

func (h *acpHost) WriteTextFile(ctx context.Context, path, content string) error {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	r := h.w.Ask(ctx, h.t, "write_file", b, "risky", h.agent.DisplayName+" writes a file", "", "")
	return resultErr(r)
}

// RunCommand is the agent's terminal/create: one run_command through the
// desktop's gate (it prompts unless a rule allows the program; the desktop
// runs it confined where it can), run to its end.
func (h *acpHost) RunCommand(ctx context.Context, c acpagent.Command) (acpagent.CommandOutput, error) {
	b, _ := json.Marshal(struct {
		Program string   `json:"program"`
		Args    []string `json:"args,omitempty"`
		Cwd     string   `json:"cwd"`
	}{c.Program, c.Args, c.Cwd})
	r := h.w.Ask(ctx, h.t, "run_command", b, "risky", h.agent.DisplayName+" runs a command", "", "")
	if err := resultErr(r); err != nil {
		return acpagent.CommandOutput{}, err
	}
	var cr tools.CommandResult
	if err := json.Unmarshal([]byte(r.Result), &cr); err != nil {
		return acpagent.CommandOutput{}, fmt.Errorf("the desktop's run_command result is not a command result: %w", err)
	}
	return acpagent.CommandOutput{Output: cr.Stdout + cr.Stderr, Truncated: cr.Truncated, ExitCode: cr.ExitCode}, nil
}

func resultErr(r api.ToolResult) error {
	if r.OK {
		return nil
	}
	if r.Error != nil {
		return errors.New(*r.Error)
	}
	return errors.New("denied")
}
