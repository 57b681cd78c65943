// Package clirt is the CLI runtime: chat agents whose provider is claude-cli, codex-cli or
// pi-cli run each turn as one non-interactive run of that CLI (package
// cliagent). The CLI executes its own tools; the service relays its text as
// assistant.delta, reports each tool it uses as a status event (kind
// "tool") and in the stored answer's meta (toolCallCount, toolCalls), and
// keeps the conversation going across turns by passing back the CLI's
// session id, stored in that meta (so clearing a session also starts the
// CLI afresh).
package clirt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/cliagent"
	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// cliMeta is the meta of an answer a CLI gave.
type cliMeta struct {
	CLI struct {
		Provider string `json:"provider"`
		ResumeID string `json:"resumeId,omitempty"`
		// Instructions is the instructions' hash when the session started
		// or resumed: a change starts a new CLI session.
		Instructions string `json:"instructions,omitempty"`
	} `json:"cli"`
	Partial       bool                `json:"partial,omitempty"`
	ToolCallCount int                 `json:"toolCallCount"`
	ToolCalls     []cliagent.ToolCall `json:"toolCalls,omitempty"`
	ThinkingText  string              `json:"thinkingText,omitempty"`
	Usage         map[string]any      `json:"usage,omitempty"`
}

// Runtime runs the turns of CLI agents.
type Runtime struct {
	env turn.Env
	// systemPrompt is what the CLI's own system prompt is extended with
	// (skills, memory, the agents it may ask).
	systemPrompt func(c *config.Config, a config.Agent) string
	// instructions identifies what the agent is told apart from memory: a
	// CLI session resumed after it changed would keep the old instructions.
	instructions func(c *config.Config, a config.Agent) string
}

// New returns the CLI runtime; systemPrompt builds the extension of the
// CLI's own system prompt, instructions a hash of what it says apart from
// memory.
func New(env turn.Env, systemPrompt, instructions func(c *config.Config, a config.Agent) string) *Runtime {
	return &Runtime{env: env, systemPrompt: systemPrompt, instructions: instructions}
}

// cliRunner returns the runner of a CLI agent.
func (rt *Runtime) cliRunner(a config.Agent, ch config.Chat) (*cliagent.Runner, error) {
	dir := ch.WorkDir
	if dir == "" {
		dir = filepath.Join(rt.env.DataDir, "cli", a.AgentID)
	}
	sb := rt.env.Sandbox
	if ch.Sandbox != nil && !*ch.Sandbox {
		sb = nil // the approved config asks for no sandbox
	}
	return cliagent.New(cliagent.Options{Kind: cliagent.Kind(ch.Provider), WorkDir: dir, Model: ch.Model,
		ExtraArgs: ch.Args, PermissionMode: ch.PermissionMode, Logger: rt.env.Log, Sandbox: sb})
}

// Run runs a turn of a chat agent with a CLI provider.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	bg := context.Background()
	c := rt.env.Config()
	ch := c.ResolvedChat(agent)
	runner, err := rt.cliRunner(agent, ch)
	if err != nil {
		return turn.Failed("internal", "%v", err)
	}
	if _, err := runner.LookPath(); err != nil {
		return turn.Failed("cli_not_installed", "Agent %q uses %s, but its CLI is not installed: %v", agent.AgentID, ch.Provider, err)
	}
	if ch.WorkDir == "" {
		if err := os.MkdirAll(filepath.Join(rt.env.DataDir, "cli", agent.AgentID), 0o700); err != nil {
			return turn.Failed("internal", "could not create the CLI's working folder: %v", err)
		}
	}
	prompt, resume, prevInstr, err := rt.turnInput(bg, t, ch.Provider)
	if err != nil {
		return turn.Failed("internal", "could not read the conversation: %v", err)
	}
	instr := rt.instructions(c, agent)
	if resume != "" && prevInstr != "" && prevInstr != instr {
		resume = ""
		rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: fmt.Sprintf("%s's instructions changed: starting a new %s conversation", agent.DisplayName, ch.Provider), Kind: "agent_status", TurnID: t.ID})
	}
	// Where the CLI runs (Jarvis's sandbox, its own, or none) is said at
	// each turn, and in the audit row of each tool it ran.
	where := fmt.Sprintf("%s runs %s", ch.Provider, runner.Sandbox())
	rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: where, Kind: "agent_status", TurnID: t.ID})
	tools := 0
	res, err := runner.Run(ctx, cliagent.Request{Prompt: prompt, SystemPrompt: rt.systemPrompt(c, agent), ResumeID: resume}, func(ev cliagent.Event) {
		switch {
		case ev.TextDelta != "":
			rt.env.Publisher.Publish(t.SessionID, api.EventDelta, api.TextEvent{Text: ev.TextDelta, TurnID: t.ID})
		case ev.ThinkingDelta != "":
			t.Stats.AddThinking(ev.ThinkingDelta)
		case ev.ToolStarted != nil:
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: fmt.Sprintf("%s is using %s", agent.DisplayName, ev.ToolStarted.Name), Kind: "tool", TurnID: t.ID})
		case ev.ToolFinished != nil:
			tools++
			rt.publishAgentTool(t, ch.Provider, where, tools, *ev.ToolFinished)
		case ev.Status != "":
			rt.env.Publisher.Publish(t.SessionID, api.EventStatus, api.StatusEvent{Text: ev.Status, Kind: "agent_status", TurnID: t.ID})
		}
	})
	var m cliMeta
	m.CLI.Provider, m.CLI.ResumeID, m.CLI.Instructions = ch.Provider, res.ResumeID, instr
	if m.CLI.ResumeID == "" {
		m.CLI.ResumeID = resume // a failed resume keeps the conversation it tried to continue
	}
	m.ToolCallCount, m.ToolCalls, m.ThinkingText, m.Usage = len(res.ToolCalls), res.ToolCalls, res.Thinking, res.Usage
	for _, tc := range res.ToolCalls {
		t.Stats.AddTool(tc.Name, msDuration(tc.DurationMs))
	}
	answer := store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: res.Text}
	if err != nil {
		if strings.TrimSpace(res.Text) != "" { // keep what the user saw, and the CLI session
			m.Partial = true
			answer.Meta = marshalMeta(m)
			if _, err := rt.env.Store.AddMessage(bg, answer); err != nil {
				rt.env.Log.Error("store partial CLI answer", "err", err)
			}
		}
		var ee *cliagent.ExitError
		switch {
		case errors.Is(err, cliagent.ErrNotInstalled):
			return turn.Failed("cli_not_installed", "Agent %q uses %s, but its CLI is not installed: %v", agent.AgentID, ch.Provider, err)
		case ctx.Err() != nil:
			return turn.Failed("cancelled", "Stopped: the turn was cancelled.")
		case errors.Is(err, cliagent.ErrEmptyReply):
			return turn.Failed("cli_empty_reply", "Agent %q (%s) ended the turn without a reply: %v", agent.AgentID, ch.Provider, err)
		case errors.As(err, &ee) && ee.Auth:
			return turn.Failed("cli_auth", "Agent %q cannot sign in to its model: %s", agent.AgentID, ee.Error())
		case llm.IsContextOverflow(err.Error()):
			// The CLI keeps its own conversation: Jarvis cannot compact it.
			return turn.Failed(llm.CodeContextOverflow, "The %s conversation of agent %q no longer fits its model's context window (%v). The CLI keeps this conversation itself: start a new session (the CLI then starts a fresh conversation) or compact it in the CLI.", ch.Provider, agent.AgentID, err)
		case errors.As(err, &ee):
			return turn.Failed("cli_failed", "%s", ee.Error())
		}
		return turn.Failed("cli_failed", "%v", err)
	}
	answer.Meta = marshalMeta(m)
	return turn.Outcome{Final: res.Text, Last: &answer}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func marshalMeta(m cliMeta) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// turnInput returns the turn's user message and the CLI session to
// resume: the one of the latest answer of the same provider in the session.
func (rt *Runtime) turnInput(ctx context.Context, t *turn.Turn, provider string) (prompt, resume, instr string, err error) {
	rows, err := rt.env.Store.Messages(ctx, t.SessionID)
	if err != nil {
		return "", "", "", err
	}
	for i := len(rows) - 1; i >= 0; i-- {
		m := rows[i]
		if m.Role == "user" && m.TurnID == t.ID && prompt == "" {
			prompt = m.Content
		}
		if m.Role == "assistant" && m.TurnID != t.ID && m.Meta != "" && resume == "" {
			var cm cliMeta
			if json.Unmarshal([]byte(m.Meta), &cm) == nil && cm.CLI.Provider == provider {
				resume, instr = cm.CLI.ResumeID, cm.CLI.Instructions
			}
		}
		if prompt != "" && resume != "" {
			break
		}
	}
	return prompt, resume, instr, nil
}

// toolSourceAgent marks a tool.result of a tool an agent's own program ran.
const toolSourceAgent = "agent"

// publishAgentTool reports one finished tool use of a CLI agent, so the
// record is complete: the CLI's tools run inside the CLI, outside the
// desktop's gate, and each one is published as a tool.result with source
// "agent" (no tool.request came first), which the desktop writes to its
// audit log as "ran inside the agent, not gated"; its result says where
// the CLI ran (where: "claude-cli runs in Jarvis's sandbox (…), network
// allowed").
func (rt *Runtime) publishAgentTool(t *turn.Turn, provider, where string, n int, tc cliagent.ToolCall) {
	r := api.ToolResult{ID: fmt.Sprintf("agt_%s_%d", t.ID, n), OK: !tc.IsError, Source: toolSourceAgent,
		TurnID: t.ID, Name: tc.Name, Arguments: tc.Input,
		Result: fmt.Sprintf("ran inside %s, not gated (%d ms); %s", provider, tc.DurationMs, where)}
	if tc.IsError {
		msg := fmt.Sprintf("%s reported that the tool failed", provider)
		r.Error = &msg
	}
	rt.env.Publisher.Publish(t.SessionID, api.EventToolResult, r)
}

// Outbound says where a message to a CLI agent goes: to a program on this
// computer that runs its own tools.
func (rt *Runtime) Outbound(c *config.Config, a config.Agent) string {
	return fmt.Sprintf("CLI agent %q (%s, a program on this computer that runs its own tools)", a.AgentID, c.ResolvedChat(a).Provider)
}

// Describe adds the CLI agent's provider and model to GET /v1/agents.
func (rt *Runtime) Describe(a config.Agent, info *api.AgentInfo) {
	ch := rt.env.Config().ResolvedChat(a)
	info.Provider, info.Model = ch.Provider, ch.Model
}

// Status is a CLI agent's status for GET /v1/agents: ok when the CLI is
// installed, saying where it runs (Jarvis's sandbox and what of it is
// missing here, its own, or none); unconfigured (saying how to install
// it) when it is not.
func (rt *Runtime) Status(a config.Agent) api.AgentStatus {
	r, err := rt.installed(a)
	if err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	return api.AgentStatus{State: "ok", Detail: "runs " + r.Sandbox()}
}

// Validate says why a CLI agent cannot run: its runner cannot be made or
// its CLI is not installed.
func (rt *Runtime) Validate(a config.Agent) error {
	_, err := rt.installed(a)
	return err
}

// installed returns the runner of a CLI agent whose CLI is installed, or
// why it cannot run.
func (rt *Runtime) installed(a config.Agent) (*cliagent.Runner, error) {
	r, err := rt.cliRunner(a, rt.env.Config().ResolvedChat(a))
	if err == nil {
		_, err = r.LookPath()
	}
	return r, err
}
