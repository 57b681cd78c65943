package service

// The CLI runtime: chat agents whose provider is claude-cli, codex-cli or
// pi-cli run each turn as one non-interactive run of that CLI (package
// cliagent). The CLI executes its own tools; the service relays its text as
// assistant.delta, reports each tool it uses as a status event (kind
// "tool") and in the stored answer's meta (toolCallCount, toolCalls), and
// keeps the conversation going across turns by passing back the CLI's
// session id, stored in that meta (so clearing a session also starts the
// CLI afresh).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/cliagent"
	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/store"
)

// isCLIProvider reports a chat provider that is a program on this computer
// keeping its own conversation: the CLIs, and acp agents (acp.go). The
// service neither compacts nor budgets their context, and a message to one
// leaves the process (a gated delegation).
func isCLIProvider(p string) bool {
	switch p {
	case config.ProviderClaudeCLI, config.ProviderCodexCLI, config.ProviderPiCLI, config.ProviderACP:
		return true
	}
	return false
}

// cliMeta is the meta of an answer a CLI gave.
type cliMeta struct {
	CLI struct {
		Provider string `json:"provider"`
		ResumeID string `json:"resumeId,omitempty"`
		// Instructions is cliInstructionsHash when the session started or
		// resumed: a change starts a new CLI session.
		Instructions string `json:"instructions,omitempty"`
	} `json:"cli"`
	Partial       bool                `json:"partial,omitempty"`
	ToolCallCount int                 `json:"toolCallCount"`
	ToolCalls     []cliagent.ToolCall `json:"toolCalls,omitempty"`
	ThinkingText  string              `json:"thinkingText,omitempty"`
	Usage         map[string]any      `json:"usage,omitempty"`
}

// cliRunner returns the runner of a CLI agent.
func (s *Service) cliRunner(a config.Agent, ch config.Chat) (*cliagent.Runner, error) {
	dir := ch.WorkDir
	if dir == "" {
		dir = filepath.Join(s.dataDir, "cli", a.AgentID)
	}
	return cliagent.New(cliagent.Options{Kind: cliagent.Kind(ch.Provider), WorkDir: dir, Model: ch.Model,
		ExtraArgs: ch.Args, PermissionMode: ch.PermissionMode, Logger: s.log})
}

// runCLI is the runtime of chat agents with a CLI provider.
func (s *Service) runCLI(ctx context.Context, t *turn, sess store.Session, agent config.Agent) outcome {
	bg := context.Background()
	c := s.cfg()
	ch := c.ResolvedChat(agent)
	runner, err := s.cliRunner(agent, ch)
	if err != nil {
		return failed("internal", "%v", err)
	}
	if _, err := runner.LookPath(); err != nil {
		return failed("cli_not_installed", "Agent %q uses %s, but its CLI is not installed: %v", agent.AgentID, ch.Provider, err)
	}
	if ch.WorkDir == "" {
		if err := os.MkdirAll(filepath.Join(s.dataDir, "cli", agent.AgentID), 0o700); err != nil {
			return failed("internal", "could not create the CLI's working folder: %v", err)
		}
	}
	prompt, resume, prevInstr, err := s.cliTurnInput(bg, t, ch.Provider)
	if err != nil {
		return failed("internal", "could not read the conversation: %v", err)
	}
	instr := s.cliInstructionsHash(c, agent)
	if resume != "" && prevInstr != "" && prevInstr != instr {
		resume = ""
		s.publish(t.sessionID, api.EventStatus, api.StatusEvent{Text: fmt.Sprintf("%s's instructions changed: starting a new %s conversation", agent.DisplayName, ch.Provider), Kind: "agent_status", TurnID: t.id})
	}
	tools := 0
	res, err := runner.Run(ctx, cliagent.Request{Prompt: prompt, SystemPrompt: s.cliSystemPrompt(c, agent), ResumeID: resume}, func(ev cliagent.Event) {
		switch {
		case ev.TextDelta != "":
			s.publish(t.sessionID, api.EventDelta, api.TextEvent{Text: ev.TextDelta, TurnID: t.id})
		case ev.ThinkingDelta != "":
			t.stats.addThinking(ev.ThinkingDelta)
		case ev.ToolStarted != nil:
			s.publish(t.sessionID, api.EventStatus, api.StatusEvent{Text: fmt.Sprintf("%s is using %s", agent.DisplayName, ev.ToolStarted.Name), Kind: "tool", TurnID: t.id})
		case ev.ToolFinished != nil:
			tools++
			s.publishAgentTool(t, ch.Provider, tools, *ev.ToolFinished)
		case ev.Status != "":
			s.publish(t.sessionID, api.EventStatus, api.StatusEvent{Text: ev.Status, Kind: "agent_status", TurnID: t.id})
		}
	})
	var m cliMeta
	m.CLI.Provider, m.CLI.ResumeID, m.CLI.Instructions = ch.Provider, res.ResumeID, instr
	if m.CLI.ResumeID == "" {
		m.CLI.ResumeID = resume // a failed resume keeps the conversation it tried to continue
	}
	m.ToolCallCount, m.ToolCalls, m.ThinkingText, m.Usage = len(res.ToolCalls), res.ToolCalls, res.Thinking, res.Usage
	for _, tc := range res.ToolCalls {
		t.stats.addTool(tc.Name, msDuration(tc.DurationMs))
	}
	answer := store.Message{SessionID: t.sessionID, TurnID: t.id, Role: "assistant", Content: res.Text}
	if err != nil {
		if strings.TrimSpace(res.Text) != "" { // keep what the user saw, and the CLI session
			m.Partial = true
			answer.Meta = marshalMeta(m)
			if _, err := s.st.AddMessage(bg, answer); err != nil {
				s.log.Error("store partial CLI answer", "err", err)
			}
		}
		var ee *cliagent.ExitError
		switch {
		case errors.Is(err, cliagent.ErrNotInstalled):
			return failed("cli_not_installed", "Agent %q uses %s, but its CLI is not installed: %v", agent.AgentID, ch.Provider, err)
		case ctx.Err() != nil:
			return failed("cancelled", "Stopped: the turn was cancelled.")
		case errors.Is(err, cliagent.ErrEmptyReply):
			return failed("cli_empty_reply", "Agent %q (%s) ended the turn without a reply: %v", agent.AgentID, ch.Provider, err)
		case errors.As(err, &ee) && ee.Auth:
			return failed("cli_auth", "Agent %q cannot sign in to its model: %s", agent.AgentID, ee.Error())
		case llm.IsContextOverflow(err.Error()):
			// The CLI keeps its own conversation: Jarvis cannot compact it.
			return failed(llm.CodeContextOverflow, "The %s conversation of agent %q no longer fits its model's context window (%v). The CLI keeps this conversation itself: start a new session (the CLI then starts a fresh conversation) or compact it in the CLI.", ch.Provider, agent.AgentID, err)
		case errors.As(err, &ee):
			return failed("cli_failed", "%s", ee.Error())
		}
		return failed("cli_failed", "%v", err)
	}
	answer.Meta = marshalMeta(m)
	return outcome{final: res.Text, last: &answer}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func marshalMeta(m cliMeta) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// cliTurnInput returns the turn's user message and the CLI session to
// resume: the one of the latest answer of the same provider in the session.
func (s *Service) cliTurnInput(ctx context.Context, t *turn, provider string) (prompt, resume, instr string, err error) {
	rows, err := s.st.Messages(ctx, t.sessionID)
	if err != nil {
		return "", "", "", err
	}
	for i := len(rows) - 1; i >= 0; i-- {
		m := rows[i]
		if m.Role == "user" && m.TurnID == t.id && prompt == "" {
			prompt = m.Content
		}
		if m.Role == "assistant" && m.TurnID != t.id && m.Meta != "" && resume == "" {
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

// cliStatus is a CLI agent's status for GET /v1/agents: ok when the CLI is
// installed, unconfigured (saying how to install it) when it is not.
func (s *Service) cliStatus(a config.Agent, ch config.Chat) api.AgentStatus {
	if ch.Provider == config.ProviderACP {
		if _, err := exec.LookPath(ch.Command); err != nil {
			return api.AgentStatus{State: "unconfigured", Detail: fmt.Sprintf("the agent's command %q was not found: %v", ch.Command, err)}
		}
		return api.AgentStatus{State: "ok"}
	}
	r, err := s.cliRunner(a, ch)
	if err == nil {
		_, err = r.LookPath()
	}
	if err != nil {
		return api.AgentStatus{State: "unconfigured", Detail: err.Error()}
	}
	return api.AgentStatus{State: "ok"}
}
